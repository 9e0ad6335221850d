// The idempotency gate of one process (src/features/idempotency/gate.ts): what it decides before a
// keyed request reaches the store — a key running here now, an outcome it still holds — and what it
// keeps afterwards. The route is a recording stand-in whose `once` answers like a store's keyed
// write; the requests, end to end on real servers and stores, are in test/idempotency.
import { NO_PRECONDITIONS } from '../../src/http/conditions.js';
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { describe, test, type TestContext } from 'node:test';
import { ApiError, Replayed } from '../../src/http/errors.js';
import {
  DEFAULT_IDEMPOTENCY_TTL_MS,
  IdempotencyGate,
} from '../../src/features/idempotency/gate.js';
import type { Idempotent, Reply, Route, RouteInput } from '../../src/http/route.js';
import type { KeyedOutcome, KeyedWrite } from '../../src/common/keyed-writes.js';
import { UNBOUNDED_WORK } from '../../src/common/work.js';

const HOUR = 60 * 60 * 1000;
const TTL = HOUR;
const EPOCH = 1_800_000_000_000;

type Input = RouteInput<Record<string, unknown>, unknown>;
type Outcome = { readonly balance: number } | { readonly unknown: true };
type Once = (key: KeyedWrite) => KeyedOutcome<Outcome> | Promise<KeyedOutcome<Outcome>>;

/** A request as the gate reads it: its method, target and Idempotency-Key header. */
function request(url: string, key?: string): IncomingMessage {
  const headers: Record<string, string> = key === undefined ? {} : { 'idempotency-key': key };
  const headersDistinct: Record<string, string[]> =
    key === undefined ? {} : { 'idempotency-key': [key] };
  return { method: 'POST', url, headers, headersDistinct } as unknown as IncomingMessage;
}

const DONE: Outcome = { balance: 90 };

/** The answer to an outcome, from the request's own input (its `params.account`) and the outcome. */
function reply(input: Input, outcome: Outcome): Reply {
  if ('unknown' in outcome)
    throw new ApiError('HTTP_404', {
      message: `Account ${String(input.params.account)} not found`,
    });
  return {
    status: 200,
    body: `{"account":"${String(input.params.account)}","balance":${outcome.balance}}`,
  };
}

interface RecordingRoute extends Route {
  readonly keys: KeyedWrite[];
  readonly idempotent: Idempotent<Record<string, unknown>, unknown, unknown>;
}

/**
 * A route whose keyed writes go to `once`; by default, a store's keyed write (storeLike). The gate
 * sends it no write without a key: such a request goes to its handler.
 */
function keyedRoute(once: Once = storeLike()): RecordingRoute {
  const keys: KeyedWrite[] = [];
  return {
    method: 'POST',
    path: '/withdraw/{account}/{amount}',
    status: 200,
    params: [],
    body: undefined,
    docs: { name: 'withdraw' },
    keys,
    idempotent: {
      write: async (_input, key) => {
        if (key === undefined)
          throw new Error('the gate sends a write without a key to the handler');
        keys.push(key);
        return once(key);
      },
      reply: (input, outcome) => reply(input, outcome as Outcome),
    },
    handle: () => ({ status: 200, body: 'unkeyed' }),
  };
}

/**
 * What a store answers for a keyed write: a key it holds a live record of is replayed from that
 * record (`recorded`); otherwise the write runs and its outcome is recorded at the request's time.
 */
function storeLike(outcome: Outcome = DONE): Once {
  const records = new Map<string, { fingerprint: string; recordedAtMs: number }>();
  return (key) => {
    const record = records.get(key.key);
    if (record !== undefined && record.recordedAtMs >= key.expiredBeforeMs)
      return { kind: 'recorded', outcome, ...record };
    records.set(key.key, { fingerprint: key.fingerprint, recordedAtMs: key.nowMs });
    return { kind: 'ran', outcome };
  };
}

/** A store that answers every request as a replay of a record made at `recordedAtMs` for `fingerprint`. */
function recordedAt(recordedAtMs: () => number, fingerprint = 'POST /withdraw/alice/10'): Once {
  return () => ({ kind: 'recorded', fingerprint, outcome: DONE, recordedAtMs: recordedAtMs() });
}

const INPUT: Input = {
  params: { account: 'alice' },
  body: undefined,
  preconditions: NO_PRECONDITIONS,
};

/** The gate's answer; what it throws at once (before any store call) becomes a rejection. */
async function run(
  gate: IdempotencyGate,
  route: RecordingRoute,
  url: string,
  key?: string,
  input: Input = INPUT,
): Promise<Reply> {
  return gate.run(route, route.idempotent, input, request(url, key), undefined, UNBOUNDED_WORK);
}

function codeOf(error: unknown): string {
  assert.ok(error instanceof ApiError, `an ApiError, not ${String(error)}`);
  return error.code;
}

function mockClock(t: TestContext): void {
  t.mock.timers.enable({ apis: ['Date'], now: EPOCH });
}

describe('the idempotency gate of one process', () => {
  test('keys live 24 hours unless configured otherwise', () => {
    assert.equal(DEFAULT_IDEMPOTENCY_TTL_MS, 24 * HOUR);
  });

  test('a request without a key goes to the handler, and never to the keyed write', async () => {
    const route = keyedRoute();
    assert.deepEqual(
      await run(new IdempotencyGate({ required: false, ttlMs: TTL }), route, '/withdraw/alice/10'),
      { status: 200, body: 'unkeyed' },
    );
    assert.equal(route.keys.length, 0);
  });

  test('a keyed request reaches the store with its key, fingerprint, time and the bound before which records expired', async (t) => {
    mockClock(t);
    const route = keyedRoute();
    await run(
      new IdempotencyGate({ required: false, ttlMs: TTL }),
      route,
      '/withdraw/alice/10',
      '"k1"',
    );
    assert.deepEqual(route.keys[0], {
      key: 'k1',
      fingerprint: 'POST /withdraw/alice/10',
      nowMs: EPOCH,
      expiredBeforeMs: EPOCH - TTL,
    });
  });

  test('the first answer is the reply to the outcome, and is no replay; an error outcome is thrown as it is', async () => {
    const gate = new IdempotencyGate({ required: false, ttlMs: TTL });
    assert.deepEqual(await run(gate, keyedRoute(), '/withdraw/alice/10', 'k'), {
      status: 200,
      body: '{"account":"alice","balance":90}',
    });
    await assert.rejects(
      run(gate, keyedRoute(storeLike({ unknown: true })), '/withdraw/alice/10', 'u'),
      (error) => error instanceof ApiError && error.status === 404,
    );
  });

  test('a second request with a key still running here is 409 with Retry-After when it is the same request, and 422 when it is another', async () => {
    const gate = new IdempotencyGate({ required: false, ttlMs: TTL });
    let finish: () => void = () => undefined;
    const route = keyedRoute(
      () => new Promise((resolve) => (finish = () => resolve({ kind: 'ran', outcome: DONE }))),
    );
    const first = run(gate, route, '/withdraw/alice/10', 'k');
    await assert.rejects(run(gate, route, '/withdraw/alice/10', 'k'), (error) => {
      assert.equal(codeOf(error), 'IDEMPOTENCY_KEY_IN_FLIGHT');
      assert.deepEqual((error as ApiError).headers, { 'Retry-After': '1' });
      return (error as ApiError).status === 409;
    });
    await assert.rejects(
      run(gate, route, '/withdraw/alice/20', 'k'),
      (error) => codeOf(error) === 'IDEMPOTENCY_KEY_REUSED',
    );
    assert.equal(route.keys.length, 1, 'neither reached the store');
    finish();
    await first;
  });

  test('another instance holding the key is 409 with Retry-After', async () => {
    const route = keyedRoute(() => ({ kind: 'in-flight' }));
    await assert.rejects(
      run(new IdempotencyGate({ required: false, ttlMs: TTL }), route, '/withdraw/alice/10', 'k'),
      (error) =>
        codeOf(error) === 'IDEMPOTENCY_KEY_IN_FLIGHT' &&
        (error as ApiError).headers['Retry-After'] === '1',
    );
  });

  test('a keyed write that failed passes its failure on as it is, and frees its key: thrown or rejected', async () => {
    const failure = new Error('store unavailable');
    const endings: [name: string, once: Once][] = [
      [
        'thrown',
        () => {
          throw failure;
        },
      ],
      ['rejected', () => Promise.reject(failure)],
    ];
    for (const [name, once] of endings) {
      const gate = new IdempotencyGate({ required: false, ttlMs: TTL });
      await assert.rejects(
        run(gate, keyedRoute(once), '/withdraw/alice/10', 'k'),
        (error) => error === failure,
        name,
      );
      const again = keyedRoute();
      await run(gate, again, '/withdraw/alice/10', 'k');
      assert.equal(again.keys.length, 1, `the retry after a ${name} failure ran`);
    }
  });

  test('an outcome asked for again is replayed with Idempotent-Replayed: true, then remembered: later retries do not reach the store', async () => {
    const gate = new IdempotencyGate({ required: false, ttlMs: TTL });
    const route = keyedRoute();
    await run(gate, route, '/withdraw/alice/10', 'k');
    const replayed = {
      status: 200,
      body: '{"account":"alice","balance":90}',
      headers: { 'Idempotent-Replayed': 'true' },
    };
    assert.deepEqual(await run(gate, route, '/withdraw/alice/10', 'k'), replayed);
    assert.equal(
      route.keys.length,
      2,
      'an outcome answered once is not remembered: the first retry asks the store',
    );
    assert.deepEqual(await run(gate, route, '/withdraw/alice/10', 'k'), replayed);
    await assert.rejects(
      run(gate, route, '/withdraw/alice/20', 'k'),
      (error) => codeOf(error) === 'IDEMPOTENCY_KEY_REUSED',
    );
    assert.equal(
      route.keys.length,
      2,
      'the second retry and the other request with that key were answered from memory',
    );
  });

  test("a replay is rendered from the retry's own request and the outcome, from the store and from memory alike", async () => {
    const gate = new IdempotencyGate({ required: false, ttlMs: TTL });
    const route = keyedRoute(recordedAt(() => Date.now()));
    const bob = { params: { account: 'bob' }, body: undefined, preconditions: NO_PRECONDITIONS };
    assert.equal(
      (await run(gate, route, '/withdraw/alice/10', 'k', bob)).body,
      '{"account":"bob","balance":90}',
    );
    assert.equal(
      (await run(gate, route, '/withdraw/alice/10', 'k', bob)).body,
      '{"account":"bob","balance":90}',
    );
    assert.equal(route.keys.length, 1);
  });

  test('a replayed error outcome is handed on as Replayed, so that its answer is marked replayed', async () => {
    const gate = new IdempotencyGate({ required: false, ttlMs: TTL });
    const route = keyedRoute(storeLike({ unknown: true }));
    await assert.rejects(run(gate, route, '/withdraw/alice/10', 'k'), ApiError);
    for (const from of ['the store', 'memory']) {
      await assert.rejects(
        run(gate, route, '/withdraw/alice/10', 'k'),
        (error) =>
          error instanceof Replayed &&
          error.error instanceof ApiError &&
          error.error.status === 404 &&
          error.headers.join(': ') === 'Idempotent-Replayed: true',
        from,
      );
    }
    assert.equal(route.keys.length, 2);
  });

  test('an outcome another instance recorded is replayed, and remembered for the next retry', async () => {
    const gate = new IdempotencyGate({ required: false, ttlMs: TTL });
    const route = keyedRoute(recordedAt(() => Date.now()));
    assert.deepEqual((await run(gate, route, '/withdraw/alice/10', 'k')).headers, {
      'Idempotent-Replayed': 'true',
    });
    await run(gate, route, '/withdraw/alice/10', 'k');
    assert.equal(route.keys.length, 1);
  });

  test('an outcome recorded for another request under this key is 422, and not remembered', async () => {
    const gate = new IdempotencyGate({ required: false, ttlMs: TTL });
    const route = keyedRoute(recordedAt(() => Date.now(), 'POST /withdraw/alice/99'));
    for (let i = 0; i < 2; i++) {
      await assert.rejects(
        run(gate, route, '/withdraw/alice/10', 'k'),
        (error) => codeOf(error) === 'IDEMPOTENCY_KEY_REUSED',
      );
    }
    assert.equal(route.keys.length, 2, 'each asked the store');
  });

  test('a remembered outcome is forgotten when its key expires: the request then reaches the store again', async (t) => {
    mockClock(t);
    const gate = new IdempotencyGate({ required: false, ttlMs: TTL });
    const route = keyedRoute();
    await run(gate, route, '/withdraw/alice/10', 'k');
    await run(gate, route, '/withdraw/alice/10', 'k');
    t.mock.timers.tick(TTL - 1);
    await run(gate, route, '/withdraw/alice/10', 'k');
    assert.equal(route.keys.length, 2, 'replayed from memory a millisecond before it expires');
    t.mock.timers.tick(1);
    await run(gate, route, '/withdraw/alice/10', 'k');
    assert.equal(route.keys.length, 3, 'asked the store at its expiry');
  });

  test('a replayed outcome so old that it has already expired is not remembered', async (t) => {
    mockClock(t);
    const gate = new IdempotencyGate({ required: false, ttlMs: TTL });
    const late = keyedRoute(recordedAt(() => EPOCH - TTL));
    await run(gate, late, '/withdraw/alice/10', 'k');
    await run(gate, late, '/withdraw/alice/10', 'k');
    assert.equal(late.keys.length, 2);
    const justInTime = keyedRoute(recordedAt(() => EPOCH - TTL + 1));
    await run(gate, justInTime, '/withdraw/alice/10', 'j');
    await run(gate, justInTime, '/withdraw/alice/10', 'j');
    assert.equal(justInTime.keys.length, 1, 'still a millisecond to live: remembered');
  });
});
