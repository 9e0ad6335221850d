// The idempotency gate of one process (src/http/idempotency.ts): what it decides before a keyed
// request reaches the store — a key running here now, a recorded answer it still holds — and what it
// keeps afterwards. The route is a recording stand-in that answers like a store's keyed write; the
// requests, end to end on real servers and stores, are in test/idempotency.
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { describe, test, type TestContext } from 'node:test';
import { CodedError } from '../../src/http/errors.js';
import { DEFAULT_IDEMPOTENCY_TTL_MS, IdempotencyGate, keyedReply, type IdempotencyRequest, type KeyedOutcome } from '../../src/http/idempotency.js';
import type { Reply, Route, RouteInput } from '../../src/http/route.js';

const HOUR = 60 * 60 * 1000;
const TTL = HOUR;
const EPOCH = 1_800_000_000_000;

type Input = RouteInput<Record<string, unknown>, unknown>;

/** A request as the gate reads it: its method, target and Idempotency-Key header. */
function request(url: string, key?: string): IncomingMessage {
  const headersDistinct: Record<string, string[]> = key === undefined ? {} : { 'idempotency-key': [key] };
  return { method: 'POST', url, headersDistinct } as unknown as IncomingMessage;
}

const ANSWER = { status: 200, contentType: 'application/json', headers: {}, body: '{"balance":90}' };

/** A route whose every request goes to `answer`; by default, a store's keyed write (storeLike). */
function keyedRoute(answer: (input: Input) => Reply | Promise<Reply> = storeLike()): Route & { readonly inputs: Input[] } {
  const inputs: Input[] = [];
  return {
    method: 'POST',
    path: '/withdraw/{account}/{amount}',
    status: 200,
    params: [],
    body: undefined,
    docs: { summary: 'withdraw', responses: [] } as unknown as Route['docs'],
    idempotent: true,
    inputs,
    handle: (input) => {
      inputs.push(input);
      return answer(input);
    },
  };
}

/**
 * What a store answers for a keyed write: a key it holds a live record of is replayed from that
 * record (`recorded`); otherwise the write runs and its answer is recorded at the request's time.
 */
function storeLike(): (input: Input) => Reply {
  const records = new Map<string, { fingerprint: string; recordedAtMs: number }>();
  return (input) => {
    const request = input.idempotency;
    assert.ok(request !== undefined);
    const record = records.get(request.key);
    if (record !== undefined && record.recordedAtMs >= request.expiredBeforeMs) return keyedReply(request, { kind: 'recorded', answer: ANSWER, ...record });
    records.set(request.key, { fingerprint: request.fingerprint, recordedAtMs: request.nowMs });
    return keyedReply(request, { kind: 'ran', answer: ANSWER, recordedAtMs: request.nowMs });
  };
}

function ran(input: Input): Reply {
  assert.ok(input.idempotency !== undefined);
  return keyedReply(input.idempotency, { kind: 'ran', answer: ANSWER, recordedAtMs: input.idempotency.nowMs });
}

/** A route that answers every request as a replay of a record made at `recordedAtMs` for this very request. */
function recordedAt(recordedAtMs: () => number, fingerprint = 'POST /withdraw/alice/10'): (input: Input) => Reply {
  return (input) => keyedReply(input.idempotency as IdempotencyRequest, { kind: 'recorded', fingerprint, answer: ANSWER, recordedAtMs: recordedAtMs() });
}

const INPUT: Input = { params: {}, body: undefined };

function codeOf(error: unknown): string {
  assert.ok(error instanceof CodedError, `a CodedError, not ${String(error)}`);
  return error.code;
}

function mockClock(t: TestContext): void {
  t.mock.timers.enable({ apis: ['Date'], now: EPOCH });
}

describe('the idempotency gate of one process', () => {
  test('keys live 24 hours unless configured otherwise', () => {
    assert.equal(DEFAULT_IDEMPOTENCY_TTL_MS, 24 * HOUR);
  });

  test('a keyed request reaches the route with its key, fingerprint, time and the bound before which records expired', async (t) => {
    mockClock(t);
    const gate = new IdempotencyGate({ required: false, ttlMs: TTL });
    const route = keyedRoute();
    await gate.run(route, INPUT, request('/withdraw/alice/10', '"k1"'), undefined);
    assert.deepEqual(route.inputs[0]?.idempotency, { key: 'k1', fingerprint: 'POST /withdraw/alice/10', nowMs: EPOCH, expiredBeforeMs: EPOCH - TTL });
  });

  test('a second request with a key still running here is 409 with Retry-After when it is the same request, and 422 when it is another', async () => {
    const gate = new IdempotencyGate({ required: false, ttlMs: TTL });
    let finish: () => void = () => undefined;
    const route = keyedRoute((input) => new Promise<Reply>((resolve) => (finish = () => resolve(ran(input)))));
    const first = gate.run(route, INPUT, request('/withdraw/alice/10', 'k'), undefined);
    const inFlight = ((): unknown => {
      try {
        return gate.run(route, INPUT, request('/withdraw/alice/10', 'k'), undefined);
      } catch (error) {
        return error;
      }
    })();
    assert.equal(codeOf(inFlight), 'IDEMPOTENCY_KEY_IN_FLIGHT');
    assert.deepEqual((inFlight as CodedError).headers, { 'Retry-After': '1' });
    assert.equal((inFlight as CodedError).status, 409);
    assert.throws(() => gate.run(route, INPUT, request('/withdraw/alice/20', 'k'), undefined), (error) => codeOf(error) === 'IDEMPOTENCY_KEY_REUSED');
    assert.equal(route.inputs.length, 1, 'neither reached the route');
    finish();
    await first;
  });

  test('a request that ended without a recorded answer passes that ending on as it is, and frees its key: returned, thrown or rejected', async () => {
    const unrecorded: Reply = { status: 503 };
    const failure = new Error('store unavailable');
    /** The first request of the case at hand, which ends as that case says. */
    let run: () => Reply | Promise<Reply> = () => unrecorded;
    const endings: [name: string, handle: () => Reply | Promise<Reply>, ending: () => Promise<unknown>][] = [
      ['returned', () => unrecorded, async () => assert.equal(await run(), unrecorded)],
      ['thrown', () => {
        throw failure;
      }, async () => assert.throws(run, (error) => error === failure)],
      ['rejected', () => Promise.reject(failure), async () => assert.rejects(Promise.resolve(run()), (error) => error === failure)],
    ];
    for (const [name, handle, ending] of endings) {
      const gate = new IdempotencyGate({ required: false, ttlMs: TTL });
      run = () => gate.run(keyedRoute(handle), INPUT, request('/withdraw/alice/10', 'k'), undefined);
      await ending();
      const again = keyedRoute();
      await gate.run(again, INPUT, request('/withdraw/alice/10', 'k'), undefined);
      assert.equal(again.inputs.length, 1, `the retry after a ${name} ending ran`);
    }
  });

  test('an answer asked for again is replayed with Idempotent-Replayed: true, then remembered: later retries do not reach the store', async () => {
    const gate = new IdempotencyGate({ required: false, ttlMs: TTL });
    const route = keyedRoute();
    const first = await gate.run(route, INPUT, request('/withdraw/alice/10', 'k'), undefined);
    assert.deepEqual(first.headers, {}, 'the first answer is not a replay');
    const replayed = { status: 200, body: ANSWER.body, contentType: ANSWER.contentType, headers: { 'Idempotent-Replayed': 'true' }, recorded: undefined };
    const fromStore = await gate.run(route, INPUT, request('/withdraw/alice/10', 'k'), undefined);
    assert.deepEqual({ ...fromStore, recorded: undefined }, replayed);
    assert.equal(route.inputs.length, 2, 'an answer given once is not remembered: the first retry asks the store');
    const fromMemory = await gate.run(route, INPUT, request('/withdraw/alice/10', 'k'), undefined);
    assert.deepEqual({ ...fromMemory, recorded: undefined }, replayed);
    assert.throws(() => gate.run(route, INPUT, request('/withdraw/alice/20', 'k'), undefined), (error) => codeOf(error) === 'IDEMPOTENCY_KEY_REUSED');
    assert.equal(route.inputs.length, 2, 'the second retry and the other request with that key were answered from memory');
  });

  test('an answer another instance recorded is replayed, and remembered for the next retry', async () => {
    const gate = new IdempotencyGate({ required: false, ttlMs: TTL });
    const route = keyedRoute(recordedAt(() => Date.now()));
    const replay = await gate.run(route, INPUT, request('/withdraw/alice/10', 'k'), undefined);
    assert.deepEqual(replay.headers, { 'Idempotent-Replayed': 'true' });
    await gate.run(route, INPUT, request('/withdraw/alice/10', 'k'), undefined);
    assert.equal(route.inputs.length, 1);
  });

  test('an answer recorded for another request under this key is 422, and not remembered', async () => {
    const gate = new IdempotencyGate({ required: false, ttlMs: TTL });
    const route = keyedRoute(recordedAt(() => Date.now(), 'POST /withdraw/alice/99'));
    for (let i = 0; i < 2; i++) {
      await assert.rejects(Promise.resolve(gate.run(route, INPUT, request('/withdraw/alice/10', 'k'), undefined)), (error) => codeOf(error) === 'IDEMPOTENCY_KEY_REUSED');
    }
    assert.equal(route.inputs.length, 2, 'each asked the store');
  });

  test('another instance holding the key is 409 with Retry-After', () => {
    assert.throws(
      () => keyedReply({ key: 'k', fingerprint: 'f', nowMs: 0, expiredBeforeMs: 0 }, { kind: 'in-flight' } satisfies KeyedOutcome),
      (error) => codeOf(error) === 'IDEMPOTENCY_KEY_IN_FLIGHT' && (error as CodedError).headers['Retry-After'] === '1',
    );
  });

  test('a remembered answer is forgotten when its key expires: the request then reaches the store again', async (t) => {
    mockClock(t);
    const gate = new IdempotencyGate({ required: false, ttlMs: TTL });
    const route = keyedRoute();
    await gate.run(route, INPUT, request('/withdraw/alice/10', 'k'), undefined);
    await gate.run(route, INPUT, request('/withdraw/alice/10', 'k'), undefined);
    t.mock.timers.tick(TTL - 1);
    await gate.run(route, INPUT, request('/withdraw/alice/10', 'k'), undefined);
    assert.equal(route.inputs.length, 2, 'replayed from memory a millisecond before it expires');
    t.mock.timers.tick(1);
    await gate.run(route, INPUT, request('/withdraw/alice/10', 'k'), undefined);
    assert.equal(route.inputs.length, 3, 'asked the store at its expiry');
  });

  test('a replayed answer so old that it has already expired is not remembered', async (t) => {
    mockClock(t);
    const gate = new IdempotencyGate({ required: false, ttlMs: TTL });
    const late = keyedRoute(recordedAt(() => EPOCH - TTL));
    await gate.run(late, INPUT, request('/withdraw/alice/10', 'k'), undefined);
    await gate.run(late, INPUT, request('/withdraw/alice/10', 'k'), undefined);
    assert.equal(late.inputs.length, 2);
    const justInTime = keyedRoute(recordedAt(() => EPOCH - TTL + 1));
    await gate.run(justInTime, INPUT, request('/withdraw/alice/10', 'j'), undefined);
    await gate.run(justInTime, INPUT, request('/withdraw/alice/10', 'j'), undefined);
    assert.equal(justInTime.inputs.length, 1, 'still a millisecond to live: remembered');
  });

  test('at most 10,000 answers are remembered: the oldest is forgotten first', async () => {
    const gate = new IdempotencyGate({ required: false, ttlMs: TTL });
    const route = keyedRoute(recordedAt(() => Date.now()));
    for (let i = 0; i <= 10_000; i++) await gate.run(route, INPUT, request('/withdraw/alice/10', `k${i}`), undefined);
    assert.equal(route.inputs.length, 10_001);
    await gate.run(route, INPUT, request('/withdraw/alice/10', 'k1'), undefined);
    await gate.run(route, INPUT, request('/withdraw/alice/10', 'k10000'), undefined);
    assert.equal(route.inputs.length, 10_001, 'the second oldest and the newest are still remembered');
    await gate.run(route, INPUT, request('/withdraw/alice/10', 'k0'), undefined);
    assert.equal(route.inputs.length, 10_002, 'the oldest was forgotten');
  });
});
