// The request metrics and the observer that feeds them (src/http/request-metrics.ts,
// request-observer.ts), read through prom-client's own registry as a scrape would: each request
// counted once in the bucket of its duration, buckets cumulative, sums in seconds, and the
// access line's duration in milliseconds. Through real servers, metrics.test.ts checks the
// exposition with promtool and that the counters move.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Registry } from 'prom-client';
import { createLogger } from '../../src/observe/log.js';
import { DURATION_BUCKETS_S, RequestMetrics } from '../../src/http/request-metrics.js';
import { millisecondsText, RequestObserver } from '../../src/http/request-observer.js';

/** The exposition's lines for one metric, without comments. */
async function scraped(registry: Registry, name: string): Promise<string[]> {
  return (await registry.metrics()).split('\n').filter((line) => line.startsWith(name));
}

describe('request metrics', () => {
  test('each request is counted in the first bucket whose bound it does not exceed; buckets are cumulative; sum and count per series', async () => {
    const registry = new Registry();
    const metrics = new RequestMetrics('bank', registry);
    const durations = [0.0005, 0.0007, 0.003, 0.003, 29, 31];
    for (const seconds of durations) {
      metrics.started();
      metrics.finished('GET', '/accounts/{account}', 200, seconds);
    }
    metrics.started();
    metrics.finished('POST', '/accounts/{account}', 200, 0.0001);
    const lines = await scraped(registry, 'http_request_duration_seconds');
    const series = '{service="bank",method="GET",route="/accounts/{account}",status="200"';
    const bucket = (le: string): string | undefined =>
      lines
        .find((line) =>
          line.startsWith(`http_request_duration_seconds_bucket${series},le="${le}"}`),
        )
        ?.split(' ')[1];
    assert.deepEqual(
      DURATION_BUCKETS_S.map((le) => [le, bucket(String(le))]),
      [
        [0.0005, '1'],
        [0.001, '2'],
        [0.0025, '2'],
        [0.005, '4'],
        [0.01, '4'],
        [0.025, '4'],
        [0.05, '4'],
        [0.1, '4'],
        [0.25, '4'],
        [0.5, '4'],
        [1, '4'],
        [2.5, '4'],
        [5, '4'],
        [10, '4'],
        [30, '5'],
      ],
    );
    assert.equal(bucket('+Inf'), '6');
    assert.ok(lines.includes(`http_request_duration_seconds_count${series}} 6`));
    const sum = Number(
      lines
        .find((line) => line.startsWith(`http_request_duration_seconds_sum${series}}`))
        ?.split(' ')[1],
    );
    assert.ok(Math.abs(sum - durations.reduce((a, b) => a + b, 0)) < 1e-9, String(sum));
    assert.ok(
      lines.includes(
        'http_request_duration_seconds_count{service="bank",method="POST",route="/accounts/{account}",status="200"} 1',
      ),
      'another method: its own series',
    );
    assert.deepEqual(await scraped(registry, 'http_requests_total'), [
      'http_requests_total{service="bank",method="GET",route="/accounts/{account}",status="200"} 6',
      'http_requests_total{service="bank",method="POST",route="/accounts/{account}",status="200"} 1',
    ]);
  });

  test('a series per route, method and status; the help and type are those of a histogram', async () => {
    const registry = new Registry();
    const metrics = new RequestMetrics('todo', registry);
    for (const [method, route, status] of [
      ['GET', '/todos/{id}', 200],
      ['GET', '/todos/{id}', 404],
      ['GET', 'unmatched', 404],
      ['GET', '/todos/{id}', 200],
    ] as const) {
      metrics.started();
      metrics.finished(method, route, status, 0.001);
    }
    assert.deepEqual(await scraped(registry, 'http_requests_total'), [
      'http_requests_total{service="todo",method="GET",route="/todos/{id}",status="200"} 2',
      'http_requests_total{service="todo",method="GET",route="/todos/{id}",status="404"} 1',
      'http_requests_total{service="todo",method="GET",route="unmatched",status="404"} 1',
    ]);
    // One series each in the histogram too, however the statuses of a route alternate.
    assert.deepEqual(await scraped(registry, 'http_request_duration_seconds_count'), [
      'http_request_duration_seconds_count{service="todo",method="GET",route="/todos/{id}",status="200"} 2',
      'http_request_duration_seconds_count{service="todo",method="GET",route="/todos/{id}",status="404"} 1',
      'http_request_duration_seconds_count{service="todo",method="GET",route="unmatched",status="404"} 1',
    ]);
    const text = await registry.metrics();
    assert.match(
      text,
      /^# HELP http_request_duration_seconds Time from receiving a request to handing its answer to the socket/m,
    );
    assert.match(text, /^# TYPE http_request_duration_seconds histogram$/m);
  });
});

describe('request metrics before any request', () => {
  test('the histogram has no sample until a request is made', async () => {
    const registry = new Registry();
    new RequestMetrics('todo', registry);
    const samples = (await scraped(registry, 'http_request_duration_seconds')).filter(
      (line) => !line.startsWith('http_request_duration_seconds_'),
    );
    assert.deepEqual(samples, []);
    assert.deepEqual(await scraped(registry, 'http_request_duration_seconds_count'), []);
  });
});

describe('the request observer', () => {
  test("a request's duration reaches the metrics in seconds and the access line in milliseconds, rounded to the microsecond", async () => {
    const registry = new Registry();
    const metrics = new RequestMetrics('bank', registry);
    const lines: { durationMs: number; path: string }[] = [];
    const observer = new RequestObserver({
      log: createLogger('info', (line) =>
        lines.push(JSON.parse(line) as { durationMs: number; path: string }),
      ),
      accessLog: true,
      metrics,
    });
    observer.started();
    const startedMs = performance.now();
    await new Promise((resolve) => setTimeout(resolve, 30));
    observer.finished(
      'GET',
      '/accounts/alice?token=secret',
      '/accounts/{account}',
      200,
      12,
      'rid',
      startedMs,
    );
    const elapsedMs = performance.now() - startedMs;
    const [line] = lines;
    // Rounding to the microsecond may add up to half of one to the duration.
    assert.ok(
      line !== undefined && line.durationMs >= 29 && line.durationMs <= elapsedMs + 0.0005,
      `${line?.durationMs} ms, within the ${elapsedMs} ms measured around it`,
    );
    // Compared as text: k / 1000 times 1000 is not always k in binary floating point (30.123 * 1000
    // is 30122.999…).
    assert.equal(
      String(line.durationMs),
      line.durationMs.toFixed(3).replace(/\.?0+$/, ''),
      'rounded to the microsecond',
    );
    assert.equal(line.path, '/accounts/alice', 'the path without its query');
    const sum = Number(
      (await scraped(registry, 'http_request_duration_seconds_sum'))[0]?.split(' ')[1],
    );
    assert.ok(Math.abs(sum - line.durationMs / 1000) < 0.001, `${sum} s for ${line.durationMs} ms`);
  });

  test('requests of changing methods, routes and statuses each get the line pino writes for their own fields', () => {
    const lines: string[] = [];
    const observer = new RequestObserver({
      log: createLogger('info', (line) => lines.push(line)).child({ service: 'bank' }),
      accessLog: true,
    });
    const requests = [
      ['GET', '/accounts/alice', '/accounts/{account}', 200],
      ['GET', '/accounts/bob', '/accounts/{account}', 200],
      ['GET', '/accounts/carol', '/accounts/{account}', 404],
      ['HEAD', '/accounts/carol', '/accounts/{account}', 404],
      ['POST', '/withdraw/alice/x?q="', '/withdraw/{account}/{amount}', 422],
      ['POST', '/withdraw/"a\\b"/1', '/withdraw/{account}/{amount}', 422],
      ['POST', '/withdraw/alice/1', '/withdraw/{account}/{amount}', 200],
      ['GET', '/nowhere', 'unmatched', 404],
      // Another route with the same status: its own route, not the one before.
      ['GET', '/accounts/dave', '/accounts/{account}', 404],
      ['GET', '/accounts/alice', '/accounts/{account}', 200],
    ] as const;
    requests.forEach(([method, target, route, status], i) => {
      observer.started();
      observer.finished(method, target, route, status, i * 10, `id-${i}`, performance.now());
    });
    assert.equal(lines.length, requests.length);
    const byPino: string[] = [];
    const reference = createLogger('info', (line) => byPino.push(line)).child({ service: 'bank' });
    requests.forEach(([method, target, route, status], i) => {
      const { durationMs } = JSON.parse(lines[i] as string) as { durationMs: number };
      reference.info('request', {
        requestId: `id-${i}`,
        method,
        path: target.split('?')[0],
        route,
        status,
        durationMs,
        bytes: i * 10,
      });
    });
    const withoutTime = (line: string | undefined): string | undefined =>
      line?.replace(/"time":\d+,/, '');
    assert.deepEqual(lines.map(withoutTime), byPino.map(withoutTime));
  });

  test('the access line writes a duration as String(Math.round(ms * 1000) / 1000) would, to the byte', () => {
    const reference = (ms: number): string => String(Math.round(ms * 1000) / 1000);
    for (let us = 0; us < 20_000; us++) {
      for (const ms of [us / 1000, us / 1000 + 0.0004, us / 1000 - 0.0004]) {
        if (ms >= 0) assert.equal(millisecondsText(ms), reference(ms), `${ms} ms`);
      }
    }
    let seed = 7;
    const random = (): number => (seed = (seed * 16807) % 2147483647) / 2147483647;
    for (let i = 0; i < 100_000; i++) {
      const ms = random() * 10 ** Math.floor(random() * 10);
      assert.equal(millisecondsText(ms), reference(ms), `${ms} ms`);
    }
    for (const ms of [0, 0.0005, 0.0015, 2147483.647, 2147483.648, 3e9, 1e30])
      assert.equal(millisecondsText(ms), reference(ms), `${ms} ms`);
  });
});
