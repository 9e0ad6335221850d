// Every link of the README and the guides leads somewhere: a relative link names a file of the
// repository, and a link into a guide's heading (`operating.md#traces`) names a heading it has, as
// GitHub makes the anchor of a heading (lower case, punctuation dropped, spaces as hyphens).
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { test } from 'node:test';
import { REPOSITORY } from '../support/doc-examples.js';

function documents(): string[] {
  const docs = readdirSync(join(REPOSITORY, 'docs'), { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.md'))
    .map((name) => join(REPOSITORY, 'docs', name));
  return [join(REPOSITORY, 'README.md'), join(REPOSITORY, 'bench', 'README.md'), ...docs];
}

/** The anchors of a Markdown file's headings, as GitHub writes them. */
function anchorsOf(file: string): Set<string> {
  const anchors = new Set<string>();
  let inFence = false;
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (line.startsWith('```')) inFence = !inFence;
    const heading = inFence ? null : /^#{1,6}\s+(.*)$/.exec(line);
    if (heading === null) continue;
    anchors.add(
      (heading[1] as string)
        .trim()
        .toLowerCase()
        .replace(/[^\p{L}\p{N}\s_-]/gu, '')
        .replace(/\s/g, '-'),
    );
  }
  return anchors;
}

/** The targets of a file's inline links, code spans and fenced blocks aside. */
function linksOf(file: string): string[] {
  const text = readFileSync(file, 'utf8')
    .replace(/```[\s\S]*?```/g, '')
    .replace(/`[^`\n]*`/g, '');
  return [...text.matchAll(/\]\(([^)\s]+)\)/g)].map((match) => match[1] as string);
}

test('every relative link of the README and the guides names a file, and a heading the file has', () => {
  const broken: string[] = [];
  for (const file of documents()) {
    for (const link of linksOf(file)) {
      if (/^[a-z]+:/i.test(link)) continue;
      const [path = '', anchor] = link.split('#');
      const target = path === '' ? file : join(dirname(file), path);
      const where = `${relative(REPOSITORY, file)}: ${link}`;
      if (!existsSync(target)) {
        broken.push(`${where} (no such file)`);
        continue;
      }
      if (anchor !== undefined && target.endsWith('.md') && !anchorsOf(target).has(anchor))
        broken.push(`${where} (no such heading)`);
    }
  }
  assert.deepEqual(broken, []);
});
