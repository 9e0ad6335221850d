// The kit against our own to-do service in each error format: three copies of the same service
// answer alike, so the report is empty and the exit code 0; a candidate in another format differs
// on every error, and the report says where, by route and JSON path.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { ErrorFormatName } from '../../src/http/render.js';
import type { RunningServer } from '../../src/server.js';
import { startTestServer } from '../support/server.js';
import { SUITE_TIMEOUT_MS } from '../support/time-limits.js';
import {
  diffInProcess,
  differencesOf,
  readReport,
  tempFolder,
  writeHar,
  type PlannedRequest,
} from './kit.js';

const JSON_BODY = [['Content-Type', 'application/json']] as const;

/** Successes, and errors (marked) of every kind the to-do service answers. */
const TRAFFIC: readonly (PlannedRequest & { readonly error?: true })[] = [
  { method: 'GET', path: '/todos/1' },
  { method: 'GET', path: '/todos/99', error: true },
  { method: 'POST', path: '/todos', headers: JSON_BODY, json: '{"title":"Call mum"}' },
  { method: 'POST', path: '/todos', headers: JSON_BODY, json: '{"done":1}', error: true },
  { method: 'PUT', path: '/todos/5', headers: JSON_BODY, json: '{"title":"Tea"}' },
  { method: 'POST', path: '/todos/5/done' },
  { method: 'POST', path: '/todos/5/done', error: true },
  { method: 'PATCH', path: '/todos/5', error: true },
  { method: 'HEAD', path: '/todos/5' },
  { method: 'GET', path: '/todos/5/' },
  { method: 'DELETE', path: '/todos/5' },
  { method: 'GET', path: '/todos/abc', error: true },
  { method: 'GET', path: '/v2/todos/1' },
];

const FORMATS: readonly ErrorFormatName[] = ['default', 'unified', 'problem'];

describe('the kit against our own service', { timeout: SUITE_TIMEOUT_MS }, () => {
  const folder = tempFolder();
  const har = folder.path('traffic.har');
  const running: RunningServer[] = [];
  const start = async (errors: ErrorFormatName): Promise<string> => {
    const server = await startTestServer({ service: 'todo', errors });
    running.push(server);
    return server.url;
  };

  before(() => writeHar(har, TRAFFIC));
  after(async () => {
    await Promise.all(running.map((server) => server.close()));
    folder.remove();
  });

  for (const errors of FORMATS) {
    test(`three copies of the service in the ${errors} format: no difference, exit 0`, async () => {
      const [primary, secondary, candidate] = await Promise.all([
        start(errors),
        start(errors),
        start(errors),
      ]);
      const report = folder.path(`${errors}.json`);
      const run = await diffInProcess([
        ...['--primary', primary, '--secondary', secondary, '--candidate', candidate],
        ...['--har', har, '--json', report],
      ]);
      assert.equal(run.code, 0, run.stdout + run.stderr);
      assert.equal(run.stderr, '');
      const read = readReport(report);
      assert.deepEqual(read.differences, []);
      assert.equal(read.summary.equal, TRAFFIC.length);
      assert.match(
        run.stdout,
        /verdict: the candidate answered all 13 requests as the primary did/,
      );
    });
  }

  test('a replay says how far it is on stderr, every --progress-every requests', async () => {
    const [primary, candidate] = await Promise.all([start('default'), start('default')]);
    const run = await diffInProcess([
      ...['--primary', primary, '--candidate', candidate, '--har', har],
      ...['--progress-every', '5'],
    ]);
    assert.equal(run.code, 0, run.stdout);
    assert.deepEqual(run.stderr.split('\n').slice(1), [
      'replayed 5 of 13 requests',
      'replayed 10 of 13 requests',
      '',
    ]);
  });

  test('a candidate in the unified format differs on every error, at $.detail and $.error', async () => {
    const [primary, secondary, candidate] = await Promise.all([
      start('default'),
      start('default'),
      start('unified'),
    ]);
    const report = folder.path('unified-candidate.json');
    const run = await diffInProcess([
      ...['--primary', primary, '--secondary', secondary, '--candidate', candidate],
      ...['--har', har, '--json', report],
    ]);
    assert.equal(run.code, 1, run.stdout + run.stderr);
    const errors = TRAFFIC.filter((request) => request.error === true);
    assert.deepEqual(
      differencesOf(readReport(report)),
      errors.map((request) => [`${request.method} ${request.path}`, ['$.detail', '$.error']]),
    );
    const routes = readReport(report).routes.filter((route) => route.differ > 0);
    assert.deepEqual(
      routes.map((route) => route.route),
      [
        'GET /todos/abc',
        'GET /todos/{id}',
        'PATCH /todos/{id}',
        'POST /todos',
        'POST /todos/{id}/done',
      ],
    );
  });

  test('a candidate in the problem format differs in its media type and members, not in its detail', async () => {
    const [primary, candidate] = await Promise.all([start('default'), start('problem')]);
    const report = folder.path('problem-candidate.json');
    const run = await diffInProcess([
      ...['--primary', primary, '--candidate', candidate, '--har', har, '--json', report],
    ]);
    assert.equal(run.code, 1, run.stdout + run.stderr);
    const notFound = readReport(report).differences.find((one) => one.target === '/todos/99');
    assert.deepEqual(
      notFound?.fields?.map((field) => [field.path, field.primary, field.candidate]),
      [
        ['header content-type', 'application/json', 'application/problem+json'],
        ['$.type', undefined, 'about:blank'],
        ['$.title', undefined, 'Not Found'],
        ['$.status', undefined, 404],
        ['$.code', undefined, 'HTTP_404'],
      ],
    );
  });
});
