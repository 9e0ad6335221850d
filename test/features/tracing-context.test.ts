// What tracing reads of a request's context (docs/operating.md#traces): the sampling decision made
// once, from the trace id, before any span exists; W3C Trace Context Level 2's tracestate rules
// and its random flag; OTEL_PROPAGATORS. End to end, through a real OTLP receiver.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ReceivedSpan } from '../support/otlp-receiver.js';
import { get, logLines, serverSpans, spanOf, withTraced } from '../support/traced-service.js';

const PARENT_ID = '00f067aa0ba902b7';
const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';

/**
 * traceidratio decides by the trace id alone: the XOR of its four 8-digit words against the
 * ratio's bound. At 0.5, 00…01 (XOR 1) is sampled and ffffffff00…01 (XOR fffffffe) is not.
 */
const SAMPLED_TRACE = '00000000000000000000000000000001';
const UNSAMPLED_TRACE = 'ffffffff000000000000000000000001';

test('a request not sampled makes no span: neither its own nor one for the store work it asks for, and its log lines carry no trace ids', async () => {
  const { mkdtempSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const dir = mkdtempSync(`${tmpdir()}/otel-unsampled-`);
  await withTraced(
    ['--db', `sqlite:${dir}/todo.sqlite`],
    { OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.5' },
    async (url, receiver, service) => {
      const create = async (traceId: string): Promise<string> => {
        const response = await fetch(`${url}/todos`, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            traceparent: `00-${traceId}-${PARENT_ID}-01`,
          },
          body: '{"title":"Sampled or not"}',
        });
        await response.arrayBuffer();
        assert.equal(response.status, 201);
        return response.headers.get('x-request-id') as string;
      };
      const unsampled = await create(UNSAMPLED_TRACE);
      const sampled = await create(SAMPLED_TRACE);
      // The sampled request's span and its store span arrive; by then the other's would have.
      await spanOf(receiver, sampled);
      await receiver.waitFor((spans) =>
        spans.some((s) => s.kind === 3 && s.traceId === SAMPLED_TRACE),
      );
      await new Promise((resolve) => setTimeout(resolve, 300));
      assert.deepEqual(
        receiver.spans.filter((span) => span.traceId === UNSAMPLED_TRACE),
        [],
      );
      await service.kill();
      const lines = logLines(service);
      const access = (id: string): Record<string, unknown> | undefined =>
        lines.find((line) => line.msg === 'request' && line.requestId === id);
      assert.equal(access(sampled)?.trace_id, SAMPLED_TRACE);
      assert.ok(access(unsampled) !== undefined);
      assert.equal(access(unsampled)?.trace_id, undefined);
      assert.equal(access(unsampled)?.span_id, undefined);
    },
  );
});

test('a new trace is recorded exactly when it is sampled: at ratio 0.5, the requests whose access line carries a trace id, and only those, have a span under that id', async () => {
  await withTraced(
    [],
    { OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.5' },
    async (url, receiver, service) => {
      const ids: string[] = [];
      for (let i = 0; i < 40; i += 1) ids.push((await get(`${url}/todos/1`)).requestId);
      await service.kill();
      const access = logLines(service).filter(
        (line) => line.msg === 'request' && ids.includes(line.requestId as string),
      );
      assert.equal(access.length, ids.length);
      const traced = access.filter((line) => line.trace_id !== undefined);
      // Each of 40 traces is sampled with odds of one half: none or all is 2⁻³⁹ likely.
      assert.ok(traced.length > 0 && traced.length < ids.length, `${traced.length} of 40`);
      await receiver.waitFor((spans) => serverSpans(spans).length >= traced.length);
      const spans = serverSpans(receiver.spans);
      assert.deepEqual(
        spans.map((span) => span.traceId).sort(),
        traced.map((line) => line.trace_id as string).sort(),
      );
      for (const line of traced)
        assert.match(line.trace_id as string, /^[0-9a-f]{32}$/, String(line.trace_id));
    },
  );
});

test("the W3C Level 2 random flag is kept on the span's trace flags: the caller's, and ours on a new trace", async () => {
  await withTraced([], {}, async (url, receiver) => {
    const flagsOf = async (headers: Record<string, string>): Promise<number> =>
      (await spanOf(receiver, (await get(`${url}/todos/1`, headers)).requestId)).flags;
    // OTLP's flags: the W3C flags, and 0x100 | 0x200 for a parent from another process.
    assert.equal(await flagsOf({ traceparent: `00-${TRACE_ID}-${PARENT_ID}-03` }), 0x303);
    assert.equal(await flagsOf({ traceparent: `00-${TRACE_ID}-${PARENT_ID}-01` }), 0x301);
    assert.equal(await flagsOf({}), 0x103);
  });
});

const MEMBERS_32 = Array.from({ length: 32 }, (_, i) => `k${i}=v${i}`).join(',');

/** tracestate headers and what a span keeps of each ('' for a header dropped whole). */
const TRACESTATES: readonly (readonly [string, string])[] = [
  // Keys may hold @ anywhere after their first character (Level 2), not only as tenant@system.
  ['a@b@c=1,tenant@vendor=x y', 'a@b@c=1,tenant@vendor=x y'],
  ['0digit=first', '0digit=first'],
  // Spaces and tabs around members, and empty members, are not part of the list.
  [' congo=t61rcWkgMzE , ,\trojo=00f067aa0ba902b7\t', 'congo=t61rcWkgMzE,rojo=00f067aa0ba902b7'],
  [MEMBERS_32, MEMBERS_32],
  // One invalid member drops the whole header, not that member alone.
  ['congo=t61rcWkgMzE,Rojo=00f067aa0ba902b7', ''],
  ['congo=t61rcWkgMzE,rojo', ''],
  ['congo=', ''],
  ['congo=a,b', ''],
  ['congo=t61rc=WkgMzE', ''],
  [`k=${'v'.repeat(257)}`, ''],
  [`${'k'.repeat(257)}=v`, ''],
  ['congo=1,congo=2', ''],
  [`${MEMBERS_32},k32=v32`, ''],
];

test('tracestate is read by the current W3C rules: @ in keys, a header with an invalid member dropped whole, at most 32 members', async () => {
  await withTraced([], {}, async (url, receiver) => {
    for (const [tracestate, kept] of TRACESTATES) {
      const { requestId } = await get(`${url}/todos/1`, {
        traceparent: `00-${TRACE_ID}-${PARENT_ID}-01`,
        tracestate,
      });
      const span: ReceivedSpan = await spanOf(receiver, requestId);
      assert.equal(span.traceState, kept, tracestate);
      // A bad tracestate never costs the trace: the caller's traceparent still counts.
      assert.equal(span.parentSpanId, PARENT_ID, tracestate);
    }
  });
});

test('OTEL_PROPAGATORS=none: traceparent is not read (every request starts a trace) and /openapi.json declares no trace context header', async () => {
  await withTraced([], { OTEL_PROPAGATORS: 'none' }, async (url, receiver) => {
    const { requestId } = await get(`${url}/todos/1`, {
      traceparent: `00-${TRACE_ID}-${PARENT_ID}-01`,
      tracestate: 'congo=t61rcWkgMzE',
    });
    const span = await spanOf(receiver, requestId);
    assert.notEqual(span.traceId, TRACE_ID);
    assert.equal(span.parentSpanId, '');
    assert.equal(span.traceState, '');
    const document = await (await fetch(`${url}/openapi.json`)).text();
    assert.ok(!document.includes('traceparent'));
  });
  await withTraced([], { OTEL_PROPAGATORS: 'baggage,tracecontext' }, async (url, receiver) => {
    const { requestId } = await get(`${url}/todos/1`, {
      traceparent: `00-${TRACE_ID}-${PARENT_ID}-01`,
    });
    assert.equal((await spanOf(receiver, requestId)).traceId, TRACE_ID);
  });
});
