// When the kit cannot give a whole verdict it says why in one line and exits 2: bad options, a file
// that is no HAR, a target down or that stops answering, and requests it cannot send, which are
// listed in the report (the others still replayed), never skipped in silence.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { HarEntry } from '../../src/migration/har.js';
import type { RunningServer } from '../../src/server.js';
import { get } from '../support/http.js';
import { startTestServer } from '../support/server.js';
import { PROCESS_SUITE_TIMEOUT_MS } from '../support/time-limits.js';
import { cliRun, diffInProcess, readReport, tempFolder, writeHar } from './kit.js';

/** The last line of a run without --secondary, after the line that names the noise rules. */
const lastLine = (text: string): string => text.replace(/^no --secondary: .*\n/, '');
const oneLine = (text: string): boolean => text.endsWith('\n') && !text.slice(0, -1).includes('\n');

describe('what stops the kit', { timeout: PROCESS_SUITE_TIMEOUT_MS }, () => {
  const folder = tempFolder();
  const har = folder.path('traffic.har');
  let servers: RunningServer[] = [];
  let targets: string[] = [];

  before(async () => {
    writeHar(har, [
      { method: 'GET', path: '/todos/1' },
      {
        method: 'POST',
        path: '/todos',
        headers: [['Content-Type', 'application/json']],
        json: '{"title":"Tea"}',
      },
    ]);
    servers = await Promise.all([
      startTestServer({ service: 'todo' }),
      startTestServer({ service: 'todo' }),
    ]);
    targets = ['--primary', servers[0]?.url ?? '', '--candidate', servers[1]?.url ?? ''];
  });
  after(async () => {
    await Promise.all(servers.map((server) => server.close()));
    folder.remove();
  });

  test('bad options are one line on stderr and exit code 2, through the command line too', async () => {
    for (const [args, said] of [
      [['--bogus', 'x'], /unknown option --bogus/],
      [['--primary', 'http://127.0.0.1:1', '--har', har], /--candidate is required/],
      [['--primary', 'ftp://x', '--candidate', 'http://x', '--har', har], /must be an http/],
    ] as const) {
      const run = await cliRun(['diff', ...args]);
      assert.equal(run.code, 2, run.stderr);
      assert.ok(oneLine(run.stderr), run.stderr);
      assert.match(run.stderr, said);
    }
  });

  test('--help says how to run each command, with exit code 0', async () => {
    const diff = await cliRun(['diff', '--help']);
    assert.equal(diff.code, 0);
    assert.match(diff.stdout, /^Usage: node dist\/cli\.js diff --primary URL/);
    const record = await cliRun(['record', '--help']);
    assert.equal(record.code, 0);
    assert.match(
      record.stdout,
      /^Usage: node dist\/cli\.js record --target URL --port N --har FILE/,
    );
  });

  test('a file that is no HAR is one line naming what is wrong, and exit code 2', async () => {
    const cases: [string, string, RegExp][] = [
      [
        'broken.har',
        '{"log": {"entries": [\n{',
        /broken\.har is not a HAR the kit can read: not JSON/,
      ],
      ['no-entries.har', '{"log": {}}', /\$\.log\.entries is missing/],
      [
        'no-method.har',
        '{"log": {"entries": [{"request": {"url": "http://x/"}}]}}',
        /\$\.log\.entries\[0\]\.request\.method is missing/,
      ],
    ];
    for (const [name, text, said] of cases) {
      writeFileSync(folder.path(name), text);
      const run = await diffInProcess([...targets, '--har', folder.path(name)]);
      assert.equal(run.code, 2);
      assert.ok(oneLine(run.stderr), run.stderr);
      assert.match(run.stderr, said);
      assert.equal(run.stdout, '');
    }
    const missing = await diffInProcess([...targets, '--har', folder.path('none.har')]);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /^error: cannot read the HAR .*none\.har: ENOENT/);
  });

  test('a target that is down: exit code 2, one line naming it, and nothing sent to the others', async () => {
    const run = await diffInProcess([
      ...targets.slice(0, 2),
      ...['--candidate', 'http://127.0.0.1:1', '--har', har],
    ]);
    assert.equal(run.code, 2);
    assert.ok(oneLine(run.stderr), run.stderr);
    assert.match(
      run.stderr,
      /^error: the candidate http:\/\/127\.0\.0\.1:1 is down: connect ECONNREFUSED/,
    );
    assert.equal((await get(targets[1] ?? '', '/todos/2')).status, 404, 'the POST was not sent');
  });

  test('a report it cannot write is one line and exit code 2', async () => {
    const run = await diffInProcess([
      ...targets,
      ...['--har', har, '--json', folder.path('no/such/folder/report.json')],
    ]);
    assert.equal(run.code, 2);
    assert.match(
      lastLine(run.stderr),
      /^error: cannot write the report .*report\.json: ENOENT[^\n]*\n$/,
    );
  });

  test('a target that stops answering ends the replay: exit code 2, and the report says where', async () => {
    let served = 0;
    const flaky: Server = createServer((request, response) => {
      if (++served > 1) {
        request.socket.destroy();
        return;
      }
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end('{"id":1,"title":"Buy milk","done":false}');
    });
    await new Promise<void>((resolve) => flaky.listen(0, '127.0.0.1', resolve));
    try {
      const port = (flaky.address() as AddressInfo).port;
      const report = folder.path('stopped.json');
      const run = await diffInProcess([
        ...targets.slice(0, 2),
        ...['--candidate', `http://127.0.0.1:${port}`, '--har', har, '--json', report],
      ]);
      assert.equal(run.code, 2);
      assert.match(
        lastLine(run.stderr),
        /^error: the replay stopped: the candidate \(http:\/\/127\.0\.0\.1:\d+\) gave no answer to request #2 \(POST \/todos\): socket hang up\n$/,
      );
      const read = readReport(report);
      assert.equal(read.summary.sent, 1);
      assert.match(read.stopped ?? '', /request #2/);
    } finally {
      await new Promise((resolve) => flaky.close(resolve));
    }
  });

  test('requests the kit cannot send are listed with the reason, the others replayed, and the exit code is 2', async () => {
    const entry = (request: Record<string, unknown>): Pick<HarEntry, 'request'> =>
      ({ request: { headers: [], ...request } }) as unknown as Pick<HarEntry, 'request'>;
    const file = folder.path('unsendable.har');
    const entries = [
      entry({ method: 'GET', url: 'http://recorded/todos/1' }),
      entry({ method: 'CONNECT', url: 'http://recorded:443/' }),
      entry({
        method: 'POST',
        url: 'http://recorded/todos',
        postData: { mimeType: 'application/json', text: '{"title":"T', _truncated: true },
      }),
      entry({ method: 'GET', url: '/todos/1' }),
      entry({
        method: 'GET',
        url: 'http://recorded/todos/1',
        headers: [{ name: 'X-A', value: 'a\nb' }],
      }),
      entry({ method: 'GET', url: 'http://recorded/todos/2' }),
    ];
    writeFileSync(file, JSON.stringify({ log: { entries } }));
    const report = folder.path('unsendable.json');
    // Fresh targets: the test before left its primary one write ahead.
    const fresh = await Promise.all([
      startTestServer({ service: 'todo' }),
      startTestServer({ service: 'todo' }),
    ]);
    servers.push(...fresh);
    const run = await diffInProcess([
      ...['--primary', fresh[0]?.url ?? '', '--candidate', fresh[1]?.url ?? ''],
      ...['--har', file, '--json', report],
    ]);
    assert.equal(run.code, 2, run.stdout);
    assert.equal(
      lastLine(run.stderr),
      'error: 4 requests of the HAR could not be sent, so the comparison is incomplete (see "not sent")\n',
    );
    const read = readReport(report);
    assert.deepEqual(
      read.unsent.map((one) => [one.index, one.reason]),
      [
        [2, 'its method "CONNECT" cannot be replayed'],
        [3, 'its body was recorded truncated'],
        [4, 'its URL "/todos/1" is no http(s) URL'],
        [5, 'its header "X-A" cannot be sent'],
      ],
    );
    assert.deepEqual(read.summary, {
      requests: 6,
      sent: 2,
      equal: 2,
      noiseOnly: 0,
      differ: 0,
      unsent: 4,
      detailsOmitted: 0,
    });
    assert.match(run.stdout, /not sent:\n {2}#2 CONNECT http:\/\/recorded:443\/: its method/);
  });
});
