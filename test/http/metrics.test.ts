// GET /metrics as Prometheus scrapes it: an exposition that Prometheus' own promtool accepts,
// request counters and durations that move with the requests, bounded labels, the process metrics,
// and a route that stays out of the docs and goes away with --metrics off.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { describe, test } from 'node:test';
import { get, json, postJson, send } from '../support/http.js';
import { startServiceProcess } from '../support/service-process.js';
import { freshSqlite } from '../support/store-backends.js';
import { withServer } from '../support/server.js';
import { suiteUnless } from '../support/suite.js';
import { SUITE_TIMEOUT_MS } from '../support/time-limits.js';

const PROMTOOL = '/usr/bin/promtool';
const promtoolSkip = existsSync(PROMTOOL)
  ? false
  : `no ${PROMTOOL}: install Debian's prometheus package to check the exposition`;
if (promtoolSkip !== false && process.env.CI === 'true') throw new Error(`CI: ${promtoolSkip}`);

async function scrape(url: string): Promise<string> {
  const res = await get(url, '/metrics');
  assert.equal(res.status, 200);
  assert.equal(res.headers['content-type'], 'text/plain; version=0.0.4; charset=utf-8');
  return res.text;
}

/** The value of the one sample with exactly this name and these labels, or undefined. */
function sample(
  exposition: string,
  name: string,
  labels: Readonly<Record<string, string>> = {},
): number | undefined {
  const wanted = Object.entries(labels)
    .map(([key, value]) => `${key}="${value}"`)
    .sort()
    .join(',');
  for (const line of exposition.split('\n')) {
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (match === null || match[1] !== name) continue;
    const have = (match[2] ?? '')
      .split(/,(?=[a-zA-Z_]+=")/)
      .filter((pair) => pair !== '')
      .sort()
      .join(',');
    if (have === wanted) return Number(match[3]);
  }
  return undefined;
}

async function promtool(exposition: string): Promise<{ code: number | null; output: string }> {
  const child = spawn(PROMTOOL, ['check', 'metrics'], { stdio: ['pipe', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stdin.end(exposition);
  const [code] = (await once(child, 'exit')) as [number | null];
  return { code, output };
}

const GET_TODO = { service: 'todo', method: 'GET', route: '/todos/{todo_id}', status: '200' };

describe('metrics', { timeout: SUITE_TIMEOUT_MS }, () => {
  test('http_requests_total and http_request_duration_seconds move with each request, by service, method, route template and status', async () => {
    await withServer({ service: 'todo', metrics: true }, async (url) => {
      const before = await scrape(url);
      assert.equal(sample(before, 'http_requests_total', GET_TODO), undefined);
      for (let i = 0; i < 3; i++) await get(url, '/todos/1');
      await get(url, '/todos/99');
      const after = await scrape(url);
      assert.equal(sample(after, 'http_requests_total', GET_TODO), 3);
      assert.equal(sample(after, 'http_requests_total', { ...GET_TODO, status: '404' }), 1);
      assert.equal(sample(after, 'http_request_duration_seconds_count', GET_TODO), 3);
      assert.equal(
        sample(after, 'http_request_duration_seconds_bucket', { ...GET_TODO, le: '+Inf' }),
        3,
      );
      assert.ok((sample(after, 'http_request_duration_seconds_sum', GET_TODO) ?? 0) > 0);
      // The scrape that reads the gauge is itself in flight.
      assert.equal(sample(after, 'http_requests_in_flight', { service: 'todo' }), 1);
    });
  });

  test('paths that match no route share one label value, so cardinality stays bounded', async () => {
    await withServer({ service: 'todo', metrics: true }, async (url) => {
      for (const path of ['/a', '/b/c', '/d?e=f', '/todos/1/']) await get(url, path);
      await send(url, { method: 'PATCH', path: '/todos/1' });
      const exposition = await scrape(url);
      const unmatched = { service: 'todo', method: 'GET', route: 'unmatched' };
      assert.equal(sample(exposition, 'http_requests_total', { ...unmatched, status: '404' }), 3);
      assert.equal(sample(exposition, 'http_requests_total', { ...unmatched, status: '307' }), 1);
      assert.equal(
        sample(exposition, 'http_requests_total', { ...unmatched, method: 'PATCH', status: '405' }),
        1,
      );
      const routes = new Set(
        [...exposition.matchAll(/^http_requests_total\{.*route="([^"]*)"/gm)].map((m) => m[1]),
      );
      assert.deepEqual([...routes].sort(), ['unmatched']);
    });
  });

  test('the process metrics are there: event-loop lag, heap, RSS, GC, open file descriptors', async () => {
    await withServer({ service: 'todo', metrics: true }, async (url) => {
      const exposition = await scrape(url);
      for (const name of [
        'nodejs_eventloop_lag_seconds',
        'nodejs_heap_size_used_bytes',
        'process_resident_memory_bytes',
        'nodejs_gc_duration_seconds',
        'process_open_fds',
      ]) {
        assert.match(exposition, new RegExp(`^# TYPE ${name} `, 'm'), name);
      }
    });
  });

  test('group commits show as batch sizes and commit times; the write queue depth is there', async () => {
    const file = await freshSqlite();
    try {
      await withServer({ service: 'todo', metrics: true, db: file.db }, async (url) => {
        const before = await scrape(url);
        assert.equal(sample(before, 'store_group_commit_batch_size_count', { service: 'todo' }), 0);
        await Promise.all(
          Array.from({ length: 5 }, () => postJson(url, '/todos', '{"title":"counted"}')),
        );
        const after = await scrape(url);
        const batches =
          sample(after, 'store_group_commit_batch_size_count', { service: 'todo' }) ?? 0;
        assert.ok(batches >= 1 && batches <= 5, `${batches} batches`);
        assert.equal(
          sample(after, 'store_group_commit_batch_size_sum', { service: 'todo' }),
          5,
          'five writes in all',
        );
        assert.equal(
          sample(after, 'store_group_commit_duration_seconds_count', { service: 'todo' }),
          batches,
        );
        assert.equal(sample(after, 'store_write_queue_depth', { service: 'todo' }), 0);
      });
    } finally {
      await file.drop();
    }
  });

  test('a PostgreSQL outage is counted once, and the pool is shown', async () => {
    const started = await startServiceProcess([
      'todo',
      '--db',
      'postgres://postgres@127.0.0.1:1/nowhere',
    ]);
    try {
      const url = started.urls[0] as string;
      assert.equal((await get(url, '/todos/1')).status, 503);
      const exposition = await scrape(url);
      assert.equal(sample(exposition, 'store_outages_total', { service: 'todo' }), 1);
      assert.equal(
        sample(exposition, 'store_pool_connections', { service: 'todo', state: 'idle' }),
        0,
      );
      assert.equal(sample(exposition, 'store_pool_waiting', { service: 'todo' }), 0);
    } finally {
      await started.kill('SIGTERM');
    }
  });

  suiteUnless(promtoolSkip, 'the exposition, checked by promtool', () => {
    test('promtool check metrics accepts /metrics of both services, store metrics included, with no lint problem', async () => {
      for (const service of ['todo', 'bank'] as const) {
        const file = await freshSqlite();
        try {
          await withServer({ service, metrics: true, db: file.db }, async (url) => {
            await get(url, service === 'todo' ? '/todos/1' : '/accounts/alice');
            await send(url, {
              method: 'POST',
              path: service === 'todo' ? '/todos' : '/withdraw/alice/1',
              headers: [['Content-Type', 'application/json']],
              body: '{"title":"x"}',
            });
            await get(url, '/nowhere');
            const exposition = await scrape(url);
            assert.match(
              exposition,
              /^store_group_commit_batch_size_count\{service="[a-z]+"\} 1$/m,
              service,
            );
            const { code, output } = await promtool(exposition);
            assert.equal(output, '', service);
            assert.equal(code, 0, service);
          });
        } finally {
          await file.drop();
        }
      }
    });
  });

  test('/metrics is not listed in the OpenAPI document', async () => {
    await withServer({ service: 'todo', metrics: true }, async (url) => {
      const document = json(await get(url, '/openapi.json')) as { paths: Record<string, unknown> };
      assert.ok(!('/metrics' in document.paths));
      assert.ok(!('/healthz' in document.paths), 'as /healthz is not');
    });
  });

  test('--metrics off removes the route', async () => {
    await withServer({ service: 'todo', metrics: false }, async (url) => {
      assert.equal((await get(url, '/metrics')).status, 404);
    });
  });
});
