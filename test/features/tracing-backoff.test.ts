// A collector that asks to wait (429 or 503, docs/operating.md#traces) is let wait: nothing is sent
// until its Retry-After has passed (or a backoff, without one), the batch it refused goes again
// after, and the spans that did not fit the queue meanwhile are dropped and counted as throttled.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startReceiver } from '../support/otlp-receiver.js';
import { startServiceProcess } from '../support/service-process.js';
import { dropped, get, spanFor } from '../support/traced-service.js';

const CASES = [
  { status: 429, retryAfter: '2', waitMs: 2000 },
  { status: 503, retryAfter: '2', waitMs: 2000 },
  // No Retry-After: the backoff's first step, a second give or take a fifth.
  { status: 503, retryAfter: undefined, waitMs: 800 },
  // Retry-After: 0 would have the batch sent again at once, again and again: it waits a step too.
  { status: 429, retryAfter: '0', waitMs: 800 },
] as const;

function waiting(retryAfter: string | undefined): string {
  if (retryAfter === undefined) return 'without Retry-After is given a backoff';
  if (retryAfter === '0') return "with Retry-After: 0 still waits the backoff's first step";
  return `with Retry-After: ${retryAfter} is let wait that long`;
}

for (const { status, retryAfter, waitMs } of CASES) {
  test(`a collector answering ${status} ${waiting(retryAfter)}: nothing is sent meanwhile, the batch goes again, and the spans that did not fit are counted`, async () => {
    const receiver = await startReceiver({
      busy: { status, requests: 1, ...(retryAfter === undefined ? {} : { retryAfter }) },
    });
    const service = await startServiceProcess(
      ['--otel-endpoint', receiver.url, '--db', 'memory'],
      1,
      {
        env: {
          OTEL_BSP_SCHEDULE_DELAY: '50',
          OTEL_BSP_MAX_QUEUE_SIZE: '10',
          OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '5',
        },
      },
    );
    try {
      const url = service.urls[0] as string;
      const first = await get(`${url}/todos/1`);
      while (receiver.requests < 1) await new Promise((resolve) => setTimeout(resolve, 5));
      // While the collector has us wait: 10 spans queue, the other 20 are dropped.
      for (let i = 0; i < 30; i++) assert.equal((await get(`${url}/todos/1`)).status, 200);
      await receiver.waitFor((spans) => spanFor(spans, first.requestId) !== undefined, 15_000);
      const [refused, again] = receiver.arrivals as [number, number];
      assert.ok(
        again - refused >= waitMs - 100,
        `sent again after ${Math.round(again - refused)} ms`,
      );
      assert.ok(
        (await dropped(url, 'throttled')) >= 20 - 1,
        String(await dropped(url, 'throttled')),
      );
      assert.equal(await dropped(url, 'export_failed'), 0);
    } finally {
      await service.kill();
      await receiver.close();
    }
  });
}
