// The breakdown reads callgrind's files as callgrind writes them (names given once, then by number;
// the line after calls= is a call's inclusive cost, not the caller's own) and names compiled
// JavaScript from node's --perf-basic-prof list.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  classify,
  functionCosts,
  readPerfMap,
  renderBreakdown,
  selfCosts,
} from '../../bench/breakdown.js';
import { summaryOf } from '../../bench/callgrind.js';

const DUMP = `# callgrind format
version: 1
positions: instr line
events: Ir
summary: 1160

ob=(1) /usr/bin/node
fl=(1) ???
fn=(1) uv__io_poll
0x10 0 100
+4 0 20
cob=(2) ???
cfn=(2) 0x0000000000abc010
calls=3 0x0000000000abc010 0
* 0 900
* 0 5
fn=(3) Builtins_LoadIC
0x20 0 30
ob=(2)
fn=(2)
0xabc010 0 1000
+2 0 5

totals: 1160
`;

describe('the breakdown by function', () => {
  test("each function's own cost: a call's inclusive cost is not its caller's", () => {
    const costs = selfCosts(DUMP);
    assert.equal(costs.get('/usr/bin/node\0uv__io_poll'), 125);
    assert.equal(costs.get('/usr/bin/node\0Builtins_LoadIC'), 30);
    assert.equal(costs.get('???\u00000x0000000000abc010'), 1005);
    assert.equal(
      [...costs.values()].reduce((a, b) => a + b, 0),
      1160,
    );
  });

  test('a dump is read once whole, and its summary is its count', () => {
    assert.equal(summaryOf(DUMP), 1160);
    assert.equal(summaryOf(DUMP.replace(/totals: 1160\n$/, '')), undefined);
  });

  test('compiled JavaScript is named from the list, by whose code it is', () => {
    const entries = readPerfMap(
      [
        'abc000 100 JS:*onRequest file:///home/x/project/.build/src/http/app.js:10:3',
        'abd000 10 JS:~parserOnIncoming node:_http_server:1:1',
        'abe000 10 JS:+write /home/x/project/node_modules/sonic-boom/index.js:5:1',
        'abf000 8 Builtin:CallFunction',
      ].join('\n'),
    );
    assert.deepEqual(classify('???', '0x0000000000abc010', entries), {
      label: 'onRequest src/http/app.js:10:3',
      group: 'ours (src/)',
    });
    assert.equal(classify('???', '0x0000000000abd004', entries).group, 'node:http and node JS');
    assert.deepEqual(classify('???', '0x0000000000abe000', entries), {
      label: 'write node_modules/sonic-boom/index.js:5:1',
      group: 'our libraries (node_modules)',
    });
    assert.equal(
      classify('???', '0x0000000000abf000', entries).group,
      'V8 (builtins, interpreter, GC, compiler)',
    );
    assert.equal(classify('???', '0x0000000000ffff00', entries).group, 'compiled JS, unnamed');
    assert.equal(classify('/usr/bin/node', 'uv__io_poll', entries).group, 'libuv');
    assert.equal(
      classify(
        '/usr/bin/node',
        'node::(anonymous namespace)::Parser::Execute(char const*, unsigned long)',
        entries,
      ).group,
      'node C++ (http parser, streams)',
    );
    assert.equal(
      classify('/usr/bin/node', 'void v8::internal::Heap::Scavenge()', entries).group,
      'V8 (builtins, interpreter, GC, compiler)',
    );
    assert.equal(
      classify(
        '/x/node_modules/better-sqlite3/build/Release/better_sqlite3.node',
        'sqlite3VdbeExec',
        entries,
      ).group,
      'SQLite (better-sqlite3)',
    );
    assert.equal(
      classify('/usr/lib/x86_64-linux-gnu/libc.so.6', 'malloc', entries).group,
      'libc, libstdc++',
    );
  });

  test('a dump of several threads: costs per request by function and by thread, and the table of a missed target', () => {
    const dir = mkdtempSync(join(tmpdir(), 'bench-breakdown-'));
    try {
      const main = join(dir, 'main');
      const writer = join(dir, 'writer');
      const helper = join(dir, 'helper');
      writeFileSync(main, DUMP);
      writeFileSync(
        writer,
        'positions: instr line\nevents: Ir\nob=(1) /x/better_sqlite3.node\nfn=(1) sqlite3VdbeExec\n0x1 0 400\n',
      );
      writeFileSync(
        helper,
        'positions: instr line\nevents: Ir\nob=(1) /usr/bin/node\nfn=(1) v8::internal::Heap::Scavenge()\n0x1 0 200\n',
      );
      const ours = functionCosts([main, writer, helper], undefined, 10);
      assert.equal(ours.functions.get('sqlite3VdbeExec')?.cost, 40);
      assert.equal(ours.functions.get('compiled JS, unnamed')?.cost, 100.5);
      assert.deepEqual(
        [...ours.threads],
        [
          ['main thread', 116],
          ['SQLite writer thread', 40],
          ["other threads (V8's helpers, libuv's pool)", 20],
        ],
      );
      const bare = functionCosts([main], undefined, 10);
      const text = renderBreakdown([
        { name: 'a missed one', shown: true, referenceLabel: 'bare', ours, reference: bare },
        { name: 'a met one', shown: false, referenceLabel: 'bare', ours, reference: bare },
      ]);
      assert.match(text, /### a missed one/);
      assert.doesNotMatch(text, /### a met one/);
      assert.match(text, /\| SQLite \(better-sqlite3\) \| 0\.00k \| 0\.04k \| \+0\.04k \|/);
      assert.match(text, /\| SQLite writer thread \| 0\.00k \| 0\.04k \| \+0\.04k \|/);
      assert.match(
        text,
        /\| `sqlite3VdbeExec` \| SQLite \(better-sqlite3\) \| 0\.00k \| 0\.04k \| \+0\.04k \|/,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
