// Noise, learned and by rule, against services whose answers change from run to run: each test
// starts real HTTP servers of its own that answer with dates, UUIDs, request ids and values from
// a script, so that what is noise and what is not is known to the test.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, describe, test } from 'node:test';
import { SUITE_TIMEOUT_MS } from '../support/time-limits.js';
import { diffInProcess, readReport, tempFolder, writeHar } from './kit.js';

interface Script {
  /** The `title` of every answer. */
  readonly title?: string;
  /** A random number at $.items[*].stamp, which no named rule takes for noise. */
  readonly stamps?: boolean;
  /** The value of $.v at the n-th request, then the last one. */
  readonly values?: readonly string[];
}

/** A service whose answers carry the noise a real one has: now, a fresh UUID, a request id. */
function noisyService(script: Script): Promise<{ url: string; server: Server }> {
  let served = 0;
  const server = createServer((request, response) => {
    const values = script.values ?? ['same'];
    const body = {
      id: Number(/\d+/.exec(request.url ?? '')?.[0] ?? 0),
      title: script.title ?? 'Buy milk',
      created_at: new Date(Date.now() - Math.floor(Math.random() * 1e9)).toISOString(),
      key: randomUUID(),
      meta: { requestId: String(Math.random()) },
      v: values[Math.min(served++, values.length - 1)],
      ...(script.stamps === true ? { items: [{ stamp: Math.random() }, { stamp: 1 }] } : {}),
    };
    response.writeHead(200, { 'content-type': 'application/json', 'x-request-id': randomUUID() });
    response.end(JSON.stringify(body));
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server }),
    ),
  );
}

describe('noise', { timeout: SUITE_TIMEOUT_MS }, () => {
  const folder = tempFolder();
  const har = folder.path('items.har');
  writeHar(har, [
    { method: 'GET', path: '/items/1' },
    { method: 'GET', path: '/items/2?full=1' },
    { method: 'GET', path: '/items/3' },
  ]);
  const servers: Server[] = [];
  const start = async (script: Script): Promise<string> => {
    const { url, server } = await noisyService(script);
    servers.push(server);
    return url;
  };
  after(async () => {
    await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
    folder.remove();
  });

  const diff = (targets: readonly string[], report: string) =>
    diffInProcess([...targets, '--har', har, '--json', folder.path(report)]);

  test('a field that differs between primary and secondary is noise for its route, at any index, and is not reported', async () => {
    const script = { stamps: true };
    const [primary, secondary, candidate] = await Promise.all([
      start(script),
      start(script),
      start(script),
    ]);
    const run = await diff(
      ['--primary', primary, '--secondary', secondary, '--candidate', candidate],
      'learned.json',
    );
    assert.equal(run.code, 0, run.stdout);
    const report = readReport(folder.path('learned.json'));
    assert.deepEqual(report.differences, []);
    assert.deepEqual([...(report.noise.learned['GET /items/{id}'] ?? [])].sort(), [
      '$.created_at',
      '$.items[*].stamp',
      '$.key',
      '$.meta.requestId',
    ]);
    assert.deepEqual(report.routes, [
      { route: 'GET /items/{id}', requests: 3, equal: 0, noiseOnly: 3, differ: 0 },
    ]);
  });

  test('a candidate that differs beyond the noise is reported at that path alone', async () => {
    const [primary, secondary, candidate] = await Promise.all([
      start({}),
      start({}),
      start({ title: 'Buy oat milk' }),
    ]);
    const run = await diff(
      ['--primary', primary, '--secondary', secondary, '--candidate', candidate],
      'title.json',
    );
    assert.equal(run.code, 1, run.stdout);
    const [first] = readReport(folder.path('title.json')).differences;
    assert.deepEqual(
      first?.fields?.map((field) => [field.path, field.primary, field.candidate]),
      [['$.title', 'Buy milk', 'Buy oat milk']],
    );
    assert.deepEqual(
      first?.noise?.map((noise) => noise.path),
      ['$.created_at', '$.key', '$.meta.requestId'],
    );
  });

  test('noise learned late clears a request that differed before it was learned', async () => {
    const [primary, secondary, candidate] = await Promise.all([
      start({ values: ['a', 'b'] }),
      start({ values: ['a', 'c'] }),
      start({ values: ['z', 'd'] }),
    ]);
    const run = await diff(
      ['--primary', primary, '--secondary', secondary, '--candidate', candidate],
      'late.json',
    );
    assert.equal(run.code, 0, run.stdout);
    const report = readReport(folder.path('late.json'));
    assert.ok(report.noise.learned['GET /items/{id}']?.includes('$.v'));
    assert.equal(report.summary.noiseOnly, 3);
  });

  test('without a secondary, named rules take dates, UUIDs and request ids for noise, and say so', async () => {
    const [primary, candidate] = await Promise.all([start({}), start({})]);
    const run = await diff(['--primary', primary, '--candidate', candidate], 'rules.json');
    assert.equal(run.code, 0, run.stdout);
    assert.equal(
      run.stderr,
      'no --secondary: noise falls back on the rules dates, uuids, request-ids, ids-in-location (the report says what each takes)\n',
    );
    const report = readReport(folder.path('rules.json'));
    assert.equal(report.noise.learnedFrom, 'rules');
    assert.deepEqual(
      report.noise.rules.map((rule) => rule.name),
      ['dates', 'uuids', 'request-ids', 'ids-in-location'],
    );
    assert.match(
      run.stdout,
      /noise: no secondary, so the kit falls back on these rules:\n {2}dates: /,
    );
  });

  test('without a secondary, what no rule takes for noise is a difference', async () => {
    const [primary, candidate] = await Promise.all([
      start({ stamps: true }),
      start({ stamps: true }),
    ]);
    const run = await diff(['--primary', primary, '--candidate', candidate], 'stamps.json');
    assert.equal(run.code, 1, run.stdout);
    const report = readReport(folder.path('stamps.json'));
    assert.deepEqual(
      report.differences.map((one) => one.paths),
      [['$.items[*].stamp'], ['$.items[*].stamp'], ['$.items[*].stamp']],
    );
    assert.deepEqual(
      report.differences[0]?.noise?.map((noise) => `${noise.path} ${noise.by}`),
      ['$.created_at rule dates', '$.key rule uuids', '$.meta.requestId rule request-ids'],
    );
  });

  test('the HTML report shows a hostile answer as text: nothing in it can run', async () => {
    const hostile = '</pre></td><script>alert(1)</script><img src=x onerror="alert(2)">';
    const [primary, candidate] = await Promise.all([start({}), start({ title: hostile })]);
    const run = await diffInProcess([
      ...['--primary', primary, '--candidate', candidate, '--har', har],
      ...['--html', folder.path('hostile.html')],
    ]);
    assert.equal(run.code, 1);
    const html = readFileSync(folder.path('hostile.html'), 'utf8');
    assert.doesNotMatch(html, /<script|<img|onerror="/i);
    assert.ok(html.includes('&lt;script&gt;alert(1)&lt;/script&gt;'), 'the body is shown escaped');
    assert.match(html, /<meta http-equiv="Content-Security-Policy" content="default-src 'none'/);
  });
});
