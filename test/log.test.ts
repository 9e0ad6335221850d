// The logger's two ways to write an info line: pino's own (a fields object) and infoJson (fields
// already written as JSON members, for the access line) must give the same bytes, so that an
// operator's pipeline cannot tell which one wrote a line.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { describe, test } from 'node:test';
import { createLogger, linesPerTurn, type LogFields } from '../src/observe/log.js';

/** The fields as JSON members, as a caller of infoJson writes them. */
const members = (fields: LogFields): string => `,${JSON.stringify(fields).slice(1, -1)}`;

/** Two lines written a moment apart differ only in their time: that is set aside, once checked. */
function withoutTime(line: string): string {
  const match = /^\{"level":\d+,"time":(\d+),/.exec(line);
  assert.ok(match !== null, line);
  assert.ok(Math.abs(Number(match[1]) - Date.now()) < 60_000, 'time is epoch milliseconds');
  return line.replace(/"time":\d+,/, '"time":0,');
}

// pino escapes a short string by its own loop, and hands a long one, or one with a control
// character, to JSON.stringify: each way is here.
const AWKWARD_FIELDS: LogFields = {
  requestId: 'a1b2-c3',
  quoted: '/todos/"quoted"\\back',
  control: 'tab\there\u0001',
  long: `${'x'.repeat(60)}"${'y'.repeat(60)}`,
  unicode: 'é 😀',
  status: 404,
  durationMs: 0.125,
  bytes: 0,
};

describe('log lines', () => {
  test('infoJson writes the same bytes as info with the same fields, bindings of every child included', () => {
    const lines: string[] = [];
    const log = createLogger('info', (line) => lines.push(line))
      .child({ service: 'todo' })
      .child({ worker: 2 });
    log.info('request', AWKWARD_FIELDS);
    log.infoJson('request', members(AWKWARD_FIELDS));
    assert.equal(lines.length, 2);
    const [byPino, byMembers] = lines.map(withoutTime);
    assert.equal(byMembers, byPino);
    assert.ok(byPino?.endsWith('"msg":"request"}\n'));
    assert.deepEqual(JSON.parse(byMembers ?? ''), {
      level: 30,
      time: 0,
      pid: process.pid,
      hostname: (JSON.parse(byPino ?? '') as { hostname: string }).hostname,
      service: 'todo',
      worker: 2,
      ...AWKWARD_FIELDS,
      msg: 'request',
    });
  });

  test('infoJson writes nothing when the level is above info', () => {
    const lines: string[] = [];
    const log = createLogger('warn', (line) => lines.push(line)).child({ service: 'todo' });
    log.infoJson('request', members({ status: 200 }));
    log.warn('still written');
    assert.equal(lines.length, 1);
    assert.match(lines[0] ?? '', /"msg":"still written"/);
  });

  test('infoJson ends each line with its own message when messages alternate', () => {
    const lines: string[] = [];
    const log = createLogger('info', (line) => lines.push(line));
    for (const message of ['request', 'other "one"', 'request'])
      log.infoJson(message, members({ status: 200 }));
    assert.deepEqual(
      lines.map((line) => (JSON.parse(line) as { msg: string }).msg),
      ['request', 'other "one"', 'request'],
    );
  });

  test('infoJson writes the time of each line, also when lines of one millisecond come before and after', async () => {
    const lines: string[] = [];
    const log = createLogger('info', (line) => lines.push(line));
    const bounds: [number, number][] = [];
    for (let i = 0; i < 4; i++) {
      const before = Date.now();
      log.infoJson('request', members({ status: 200 }));
      log.infoJson('request', members({ status: 200 }));
      bounds.push([before, Date.now()], [before, Date.now()]);
      await new Promise((resolve) => setTimeout(resolve, 3));
    }
    const times = lines.map((line) => (JSON.parse(line) as { time: number }).time);
    times.forEach((time, i) => {
      const [least, most] = bounds[i] as [number, number];
      assert.ok(time >= least && time <= most, `line ${i}: ${time} within ${least}..${most}`);
    });
    assert.ok((times[6] as number) > (times[0] as number), 'the time moves on');
  });
  test('infoJson writes the clock as it is, when it steps back too (the time is kept for one millisecond, compared for equality)', (t) => {
    const clock = [0, 0, 1000, 1000, 999, 1000, 0, 5];
    const lines: string[] = [];
    const log = createLogger('info', (line) => lines.push(line));
    let now = 0;
    t.mock.method(Date, 'now', () => now);
    for (const time of clock) {
      now = time;
      log.infoJson('request', members({ status: 200 }));
    }
    assert.deepEqual(
      lines.map((line) => (JSON.parse(line) as { time: number }).time),
      clock,
    );
  });
});

describe('lines per turn', () => {
  const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

  test('the lines of one turn reach the destination together, in order, when the turn ends', async () => {
    const writes: string[] = [];
    const lines = linesPerTurn((bytes) => writes.push(bytes.toString('utf8')));
    lines.write('one\n');
    lines.write('twö\n');
    assert.deepEqual(writes, [], 'nothing before the turn ends');
    await nextTurn();
    assert.deepEqual(writes, ['one\ntwö\n']);
    lines.write('three\n');
    await nextTurn();
    await nextTurn();
    assert.deepEqual(
      writes,
      ['one\ntwö\n', 'three\n'],
      'a later turn gets its own write, and an empty turn none',
    );
  });

  test('flush hands over what is pending at once, and the end of the turn then writes nothing more', async () => {
    const writes: string[] = [];
    const lines = linesPerTurn((bytes) => writes.push(bytes.toString('utf8')));
    lines.write('last words\n');
    lines.flush();
    assert.deepEqual(writes, ['last words\n']);
    await nextTurn();
    assert.deepEqual(writes, ['last words\n']);
  });
});

describe('the logger on stdout, in a process of its own', () => {
  const LOG_MODULE = new URL('../src/observe/log.js', import.meta.url).href;

  /** Runs `body` (an async function body with `log`, a logger on stdout, in scope) in a fresh node. */
  function run(body: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
    const script = `const { createLogger } = await import(${JSON.stringify(LOG_MODULE)}); const log = createLogger('info'); ${body}`;
    return new Promise((resolve) => {
      execFile(
        process.execPath,
        ['--input-type=module', '-e', script],
        { timeout: 20_000 },
        (error, stdout, stderr) => {
          resolve({
            code: error === null ? 0 : typeof error.code === 'number' ? error.code : null,
            stdout,
            stderr,
          });
        },
      );
    });
  }

  test('a line logged just before an uncaught exception still reaches stdout', async () => {
    const { code, stdout, stderr } = await run(
      `setTimeout(() => { log.error('last words'); throw new Error('boom'); }, 10);`,
    );
    assert.equal(code, 1);
    assert.match(stderr, /boom/);
    assert.match(stdout, /"msg":"last words"/);
  });

  test('every line reaches stdout before close() resolves, and a line logged after it changes nothing', async () => {
    const { code, stdout, stderr } = await run(`
      for (let i = 0; i < 2000; i++) log.info('line', { i });
      await log.close();
      log.info('too late');
      setImmediate(() => setImmediate(() => process.exit(0)));`);
    assert.equal(stderr, '');
    assert.equal(code, 0);
    const lines = stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { i?: number });
    assert.deepEqual(
      lines.map((line) => line.i),
      Array.from({ length: 2000 }, (_, i) => i),
    );
  });
});
