// `record`, the recording proxy, as a process in front of real services: what passes through is
// what the service answered, and what is written is a HAR that keeps the bodies, redacts the
// credentials unless asked, cuts a body at the bound (flagged), and is whole on disk while the
// proxy runs and after a signal stops it.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { Har } from '../../src/migration/har.js';
import { prepare } from '../../src/migration/replay-request.js';
import type { RunningServer } from '../../src/server.js';
import { get, send } from '../support/http.js';
import { startTestServer } from '../support/server.js';
import { PROCESS_SUITE_TIMEOUT_MS } from '../support/time-limits.js';
import { cliRun, tempFolder } from './kit.js';
import { startRecording } from './recording.js';

const readHar = (file: string): Har => JSON.parse(readFileSync(file, 'utf8')) as Har;

/** A service that sets a cookie and answers with the bytes it was sent. */
function echoService(): Promise<{ url: string; server: Server }> {
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      response.writeHead(200, {
        'content-type': 'application/octet-stream',
        'set-cookie': 'sid=s3cret; Path=/; HttpOnly',
      });
      response.end(Buffer.concat(chunks));
    });
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server }),
    ),
  );
}

const header = (headers: readonly { name: string; value: string }[], name: string) =>
  headers.find((h) => h.name.toLowerCase() === name)?.value;

describe('record', { timeout: PROCESS_SUITE_TIMEOUT_MS }, () => {
  const folder = tempFolder();
  let todo: RunningServer;
  let echo: { url: string; server: Server };

  before(async () => {
    [todo, echo] = await Promise.all([startTestServer({ service: 'todo' }), echoService()]);
  });
  after(async () => {
    await todo.close();
    await new Promise((resolve) => echo.server.close(resolve));
    folder.remove();
  });

  test('every exchange passes through as the service answered and is recorded in order, bodies kept; SIGTERM writes the HAR and exits 0', async () => {
    const har = folder.path('todo.har');
    const recording = await startRecording(todo.url, har);
    const sent = [
      { method: 'GET', path: '/todos/1' },
      {
        method: 'POST',
        path: '/todos?x=1',
        headers: [['Content-Type', 'application/json']] as const,
        body: '{"title":"Tea"}',
      },
      { method: 'GET', path: '/todos/abc' },
    ];
    const answers = [];
    for (const request of sent) answers.push(await send(recording.url, request));
    assert.equal((await get(todo.url, '/todos/2')).text, answers[1]?.text, 'the POST reached it');
    assert.equal(await recording.stop('SIGTERM'), 0, recording.output());
    assert.match(recording.output(), /recorded 3 exchanges into /);
    const entries = readHar(har).log.entries;
    assert.deepEqual(
      entries.map((entry) => [
        entry.request.method,
        entry.request.url,
        entry.request.postData?.text,
      ]),
      [
        ['GET', `${todo.url}/todos/1`, undefined],
        ['POST', `${todo.url}/todos?x=1`, '{"title":"Tea"}'],
        ['GET', `${todo.url}/todos/abc`, undefined],
      ],
    );
    assert.deepEqual(
      entries.map((entry) => [entry.response.status, entry.response.content.text]),
      answers.map((answer) => [answer.status, answer.text]),
    );
    assert.deepEqual(entries[1]?.request.queryString, [{ name: 'x', value: '1' }]);
  });

  test('Authorization, Cookie and Set-Cookie values are redacted, their schemes and names kept', async () => {
    const har = folder.path('redacted.har');
    const recording = await startRecording(echo.url, har);
    const headers = [
      ['Authorization', 'Bearer eyJhbGciOi.secret'],
      ['Cookie', 'sid=s3cret; theme=dark'],
    ] as const;
    const answer = await send(recording.url, { method: 'GET', path: '/', headers });
    assert.equal(
      answer.headers['set-cookie']?.[0],
      'sid=s3cret; Path=/; HttpOnly',
      'passed on whole',
    );
    assert.equal(await recording.stop('SIGINT'), 0);
    const text = readFileSync(har, 'utf8');
    assert.ok(!text.includes('s3cret') && !text.includes('eyJhbGciOi'), text);
    const [entry] = readHar(har).log.entries;
    assert.equal(header(entry?.request.headers ?? [], 'authorization'), 'Bearer [REDACTED]');
    assert.equal(
      header(entry?.request.headers ?? [], 'cookie'),
      'sid=[REDACTED]; theme=[REDACTED]',
    );
    assert.equal(
      header(entry?.response.headers ?? [], 'set-cookie'),
      'sid=[REDACTED]; Path=/; HttpOnly',
    );
  });

  test('--keep-secrets records them as they were', async () => {
    const har = folder.path('kept.har');
    const recording = await startRecording(echo.url, har, ['--keep-secrets']);
    await send(recording.url, {
      method: 'GET',
      path: '/',
      headers: [['Authorization', 'Basic YTpi']],
    });
    assert.equal(await recording.stop(), 0);
    const [entry] = readHar(har).log.entries;
    assert.equal(header(entry?.request.headers ?? [], 'authorization'), 'Basic YTpi');
    assert.equal(
      header(entry?.response.headers ?? [], 'set-cookie'),
      'sid=s3cret; Path=/; HttpOnly',
    );
  });

  test('a body that is not UTF-8 is recorded in base64, and replays as the same bytes', async () => {
    const har = folder.path('binary.har');
    const recording = await startRecording(echo.url, har);
    const bytes = Buffer.from([0xff, 0x00, 0xfe, 0x41, 0x80]);
    const answer = await send(recording.url, { method: 'POST', path: '/blob', body: bytes });
    assert.deepEqual(answer.body, bytes);
    assert.equal(await recording.stop(), 0);
    const [entry] = readHar(har).log.entries;
    assert.equal(entry?.request.postData?._encoding, 'base64');
    assert.equal(entry?.response.content.encoding, 'base64');
    assert.deepEqual(Buffer.from(entry?.response.content.text ?? '', 'base64'), bytes);
    const prepared = entry === undefined ? undefined : prepare(entry.request);
    assert.deepEqual(prepared?.ok === true ? prepared.request.body : undefined, bytes);
  });

  test('a body over --body-max passes through whole and is recorded cut and flagged; a replay cannot send it', async () => {
    const har = folder.path('cut.har');
    const recording = await startRecording(echo.url, har, ['--body-max', '10']);
    const body = 'x'.repeat(100);
    const answer = await send(recording.url, { method: 'POST', path: '/big', body });
    assert.equal(answer.text, body);
    assert.equal(await recording.stop(), 0);
    const [entry] = readHar(har).log.entries;
    assert.deepEqual(
      [entry?.request.postData?.text, entry?.request.postData?._truncated, entry?.request.bodySize],
      ['x'.repeat(10), true, 100],
    );
    assert.deepEqual(
      [
        entry?.response.content.text,
        entry?.response.content._truncated,
        entry?.response.content.size,
      ],
      ['x'.repeat(10), true, 100],
    );
    assert.deepEqual(entry === undefined ? undefined : prepare(entry.request), {
      ok: false,
      reason: 'its body was recorded truncated',
    });
  });

  test('while it runs, the HAR on disk is whole and holds what passed a second ago', async () => {
    const har = folder.path('running.har');
    const recording = await startRecording(todo.url, har);
    try {
      await send(recording.url, { method: 'GET', path: '/todos/1' });
      const deadline = Date.now() + 5_000;
      let entries = readHar(har).log.entries;
      while (entries.length === 0 && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        entries = readHar(har).log.entries;
      }
      assert.equal(entries.length, 1);
    } finally {
      assert.equal(await recording.stop(), 0);
    }
  });

  test('a target that does not answer: the client gets 502, the request is still recorded', async () => {
    const har = folder.path('down.har');
    const recording = await startRecording('http://127.0.0.1:1', har);
    const answer = await send(recording.url, { method: 'GET', path: '/todos/1' });
    assert.equal(answer.status, 502);
    assert.equal(await recording.stop(), 0);
    const [entry] = readHar(har).log.entries;
    assert.equal(entry?.request.url, 'http://127.0.0.1:1/todos/1');
    assert.equal(entry?.response.status, 0);
    assert.match(entry?.response.comment ?? '', /^no answer from the target: connect ECONNREFUSED/);
  });

  test('bad options are one line on stderr and exit code 2', async () => {
    for (const [args, said] of [
      [['--target', echo.url, '--har', folder.path('x.har')], /--port is required/],
      [['--target', echo.url, '--port', 'x', '--har', 'h'], /--port must be a whole number/],
      [
        ['--target', echo.url, '--port', '0', '--har', folder.path('no/such/dir.har')],
        /cannot record: ENOENT/,
      ],
    ] as const) {
      const run = await cliRun(['record', ...args]);
      assert.equal(run.code, 2, run.stderr);
      assert.match(run.stderr, said);
      assert.equal(run.stderr.trim().split('\n').length, 1, run.stderr);
    }
  });
});
