// The kit as a team uses it: traffic recorded through `record` in front of a real FastAPI (Debian's
// 0.92, pydantic 1.10), replayed by `diff` against two fresh copies of it and our to-do service.
// Our service answers as FastAPI 0.141 with pydantic 2 does, so the report must list exactly the
// 422s, each item's members as pydantic 1 and 2 word them, and nothing else.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import type { RunningServer } from '../../src/server.js';
import { send } from '../support/http.js';
import { startTestServer } from '../support/server.js';
import { PROCESS_SUITE_TIMEOUT_MS } from '../support/time-limits.js';
import { fastapiSkip, startFastApi, type FastApi } from './fastapi.js';
import { cliRun, differencesOf, readReport, tempFolder, type PlannedRequest } from './kit.js';
import { startRecording } from './recording.js';

const json = (method: string, path: string, body: string): PlannedRequest => ({
  method,
  path,
  headers: [['Content-Type', 'application/json']],
  json: body,
});

/** The traffic recorded: every route, its successes and errors, and four kinds of 422. */
const TRAFFIC: readonly PlannedRequest[] = [
  { method: 'GET', path: '/todos/1' },
  json('POST', '/todos', '{"title":"Call mum"}'),
  json('PUT', '/todos/7', '{"title":"Water plants"}'),
  json('PUT', '/todos/7', '{"title":"Water plants","done":true}'),
  { method: 'POST', path: '/todos/7/done' },
  { method: 'POST', path: '/todos/2/done' },
  { method: 'DELETE', path: '/todos/7' },
  { method: 'DELETE', path: '/todos/7' },
  { method: 'GET', path: '/todos/99' },
  { method: 'GET', path: '/v2/todos/1' },
  { method: 'DELETE', path: '/oops/2' },
  { method: 'GET', path: '/nothing/here' },
  json('POST', '/todos', '{"title":"Tea"}'),
  { method: 'GET', path: '/todos/abc' },
  json('POST', '/todos', '{"done":false}'),
  json('POST', '/todos', '{"title":"Read",}'),
  json('POST', '/todos', '{"title":"Read","done":"maybe"}'),
  { method: 'GET', path: '/v2/todos/x' },
  { method: 'DELETE', path: '/oops/abc' },
];

const ITEM = ['$.detail[0].type', '$.detail[0].msg', '$.detail[0].input'];

/** What the report must list: the 422s, and in each item what pydantic 2 words otherwise. */
const EXPECTED: [string, string[]][] = [
  ['GET /todos/abc', ITEM],
  ['POST /todos', ITEM],
  [
    'POST /todos',
    [
      '$.detail[0].type',
      '$.detail[0].msg',
      '$.detail[0].ctx.msg',
      '$.detail[0].ctx.doc',
      '$.detail[0].ctx.pos',
      '$.detail[0].ctx.lineno',
      '$.detail[0].ctx.colno',
      '$.detail[0].ctx.error',
      '$.detail[0].input',
    ],
  ],
  ['POST /todos', ITEM],
  ['GET /v2/todos/x', ITEM],
  ['DELETE /oops/abc', ITEM],
];

const skip = fastapiSkip();

describe('the kit against a real FastAPI', { skip, timeout: PROCESS_SUITE_TIMEOUT_MS }, () => {
  const folder = tempFolder();
  const har = folder.path('fastapi.har');
  let primary: FastApi;
  let secondary: FastApi;
  let candidate: RunningServer;

  before(async () => {
    // Recorded from a FastAPI of its own: the three targets must start from the same state.
    const production = await startFastApi();
    try {
      const recording = await startRecording(production.url, har);
      for (const request of TRAFFIC) await send(recording.url, { ...request, body: request.json });
      assert.equal(await recording.stop(), 0, recording.output());
    } finally {
      await production.stop();
    }
    [primary, secondary, candidate] = await Promise.all([
      startFastApi(),
      startFastApi(),
      startTestServer({ service: 'todo' }),
    ]);
  });

  after(async () => {
    await Promise.all([primary?.stop(), secondary?.stop(), candidate?.close()]);
    folder.remove();
  });

  test('the report lists exactly the 422s, item member by member, each as pydantic 2 wording', async () => {
    const recorded = JSON.parse(readFileSync(har, 'utf8')) as { log: { entries: unknown[] } };
    assert.equal(recorded.log.entries.length, TRAFFIC.length);
    const result = await cliRun([
      'diff',
      '--primary',
      primary.url,
      '--secondary',
      secondary.url,
      '--candidate',
      candidate.url,
      '--har',
      har,
      '--json',
      folder.path('report.json'),
      '--html',
      folder.path('report.html'),
    ]);
    assert.equal(result.code, 1, result.stderr);
    const report = readReport(folder.path('report.json'));
    assert.deepEqual(
      differencesOf(report).map(([request, paths]) => [request, [...paths].sort()]),
      EXPECTED.map(([request, paths]) => [request, [...paths].sort()]),
    );
    assert.ok(report.differences.every((one) => one.pydanticWordingOnly));
    assert.deepEqual(report.summary, {
      requests: TRAFFIC.length,
      sent: TRAFFIC.length,
      equal: TRAFFIC.length - EXPECTED.length,
      noiseOnly: 0,
      differ: EXPECTED.length,
      unsent: 0,
      detailsOmitted: 0,
    });
    assert.deepEqual(report.noise.learned, {}, 'two fresh FastAPIs answer alike');
    assert.match(result.stdout, /verdict: 6 of 19 requests differ beyond noise \(exit 1\)/);
    assert.match(
      result.stdout,
      /\$\.detail\[0\]\.type: primary "type_error\.integer", candidate "int_parsing"  \[pydantic 2 wording: type_error\.integer → int_parsing\]/,
    );
    const html = readFileSync(folder.path('report.html'), 'utf8');
    for (const [request] of EXPECTED) assert.ok(html.includes(request), request);
  });
});
