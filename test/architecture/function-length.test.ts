// No function in src/ is over 70 lines of its own (docs/layout.md), counted on the syntax tree by
// the TypeScript compiler: a function's lines, from its first token to its last, less the lines of
// the functions nested in it (each counted on its own). The one exception is the JSON parser's
// loop, a state machine that reads best whole.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const SRC = join(ROOT, 'src');
const OWN_LINES_MAX = 70;
/** The exceptions docs/layout.md names, as `file:function`. */
const ALLOWED = new Set(['http/json/json-decode.ts:parseText']);

interface FunctionLength {
  readonly where: string;
  readonly ownLines: number;
}

function isFunctionWithBody(node: ts.Node): node is ts.FunctionLikeDeclaration {
  return ts.isFunctionLike(node) && (node as ts.FunctionLikeDeclaration).body !== undefined;
}

function functionLengths(file: string): FunctionLength[] {
  const source = ts.createSourceFile(
    file,
    readFileSync(file, 'utf8'),
    ts.ScriptTarget.ES2022,
    true,
  );
  const lineOf = (position: number): number => source.getLineAndCharacterOfPosition(position).line;
  const linesOf = (node: ts.Node): number => lineOf(node.end) - lineOf(node.getStart(source)) + 1;
  const found: FunctionLength[] = [];
  const visit = (node: ts.Node): void => {
    if (isFunctionWithBody(node)) {
      let nestedLines = 0;
      const nested = (child: ts.Node): void => {
        if (isFunctionWithBody(child)) nestedLines += linesOf(child);
        else ts.forEachChild(child, nested);
      };
      ts.forEachChild(node, nested);
      const name = node.name === undefined ? '(anonymous)' : node.name.getText(source);
      found.push({
        where: `${relative(SRC, file)}:${name}`,
        ownLines: linesOf(node) - nestedLines,
      });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

function sources(): string[] {
  return readdirSync(SRC, { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.ts'))
    .map((name) => join(SRC, name));
}

test('no function in src/ is over 70 lines of its own, the named exceptions aside', () => {
  const lengths = sources().flatMap(functionLengths);
  // The count itself works: the parser's loop is measured, and over the bound.
  const parser = lengths.find((length) => length.where === 'http/json/json-decode.ts:parseText');
  assert.ok(parser !== undefined && parser.ownLines > OWN_LINES_MAX);
  const over = lengths
    .filter((length) => length.ownLines > OWN_LINES_MAX && !ALLOWED.has(length.where))
    .map((length) => `${length.where}: ${length.ownLines} lines`);
  assert.deepEqual(over, []);
});
