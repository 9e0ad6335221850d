// Safe retries of the operations a route marks `idempotent`: a request that carries an
// Idempotency-Key runs once; its store records the write's outcome with the key in the same
// transaction (src/common/keyed-writes.ts), and any later request with that key gets the response
// to that outcome again, with `Idempotent-Replayed: true`, without running anything. The response
// is rendered anew from the outcome each time, so a replay is the first response's bytes as long as
// the service runs with the same error format; after a restart in another format it is the same
// response in that format.
//
// What lives here, per process, is only what may be lost with the process:
// - the keys of requests running now: a second request with such a key gets 409 at once, instead
//   of queueing on the database (across instances the store decides, by a unique key);
// - the outcomes of keys that were replayed (replay-cache.ts), so that a client that retries again
//   costs no round trip to the database.
// A crash loses both, and that is safe: a retry then finds the recorded outcome in the database,
// or finds nothing and runs.
import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import {
  DEFAULT_KEY_TTL_MS,
  type KeyedOutcome,
  type KeyedWrite,
} from '../../common/keyed-writes.js';
import type { Work } from '../../common/work.js';
import { ApiError, Replayed } from '../../http/errors.js';
import { idempotencyKeyInvalid, idempotencyKeyRequired, parseIdempotencyKey } from './key.js';
import { ReplayCache } from './replay-cache.js';
import {
  keyRequired,
  type Idempotent,
  type Reply,
  type Route,
  type RouteInput,
} from '../../http/route.js';

export interface IdempotencyPolicy {
  /** Refuse (400) a request to an idempotent operation that carries no key. */
  readonly required: boolean;
  /** How long a recorded outcome is kept, and so how long its key replays it. */
  readonly ttlMs: number;
  /**
   * Keep the outcome of each keyed write that ran here in the replay cache too, not only those
   * replayed once: with rate limits on, a retry is then replayed here even when its client is over
   * its limit, without asking the database (which would decide and write in one step).
   */
  readonly keepRan?: boolean;
}

export const DEFAULT_IDEMPOTENCY_TTL_MS = DEFAULT_KEY_TTL_MS;

export const REPLAYED_HEADER = 'Idempotent-Replayed';

export const keyInFlight = (): ApiError =>
  new ApiError('IDEMPOTENCY_KEY_IN_FLIGHT', { headers: { 'Retry-After': '1' } });
export const keyReused = (): ApiError => new ApiError('IDEMPOTENCY_KEY_REUSED');

type AnyIdempotent = Idempotent<Record<string, unknown>, unknown, unknown>;
type AnyInput = RouteInput<Record<string, unknown>, unknown>;

/** A keyed write that found no recorded outcome: what once() needs to run it. */
export class KeyedRun {
  constructor(
    readonly key: string,
    readonly fingerprint: string,
    readonly nowMs: number,
  ) {}
}

export class IdempotencyGate {
  /** Key → fingerprint of the request running with it in this process. */
  private readonly running = new Map<string, string>();
  private readonly replays = new ReplayCache();

  constructor(private readonly policy: IdempotencyPolicy) {}

  /** Runs an idempotent route under the request's key, if it has one; else its handler. */
  run(
    route: Route,
    idempotent: AnyIdempotent,
    input: AnyInput,
    req: IncomingMessage,
    body: Buffer | undefined,
    work: Work,
  ): Reply | Promise<Reply> {
    const found = this.lookup(idempotent, input, req, body);
    if (found === undefined) return route.handle(input, work);
    return found instanceof KeyedRun ? this.once(idempotent, input, found, work) : found;
  }

  /**
   * What the request's key finds, before anything runs: nothing (no key: the handler answers),
   * the replay of its recorded outcome, or a KeyedRun to hand to once(). Throws the key's own
   * errors (invalid, required, in flight, reused). The rate limit decides between the two
   * (rate-limit-stage.ts), so that a replay is answered whatever the limit.
   */
  lookup(
    idempotent: AnyIdempotent,
    input: AnyInput,
    req: IncomingMessage,
    body: Buffer | undefined,
  ): Reply | KeyedRun | undefined {
    // req.headers first: the route has built it already, while headersDistinct would build a second
    // object of every header, for each request that sends no key.
    const values =
      req.headers['idempotency-key'] === undefined
        ? undefined
        : req.headersDistinct['idempotency-key'];
    if (values === undefined) {
      if (keyRequired(idempotent, this.policy.required)) throw idempotencyKeyRequired();
      return undefined;
    }
    const key = parseIdempotencyKey(values);
    if (key === undefined) throw idempotencyKeyInvalid();
    const fingerprint = fingerprintOf(req, body);
    const nowMs = Date.now();
    const cached = this.replays.get(key, nowMs);
    if (cached !== undefined) {
      if (cached.fingerprint !== fingerprint) throw keyReused();
      return replay(idempotent, input, cached.outcome);
    }
    this.assertNotRunning(key, fingerprint);
    return new KeyedRun(key, fingerprint, nowMs);
  }

  private assertNotRunning(key: string, fingerprint: string): void {
    const running = this.running.get(key);
    if (running !== undefined) throw running === fingerprint ? keyInFlight() : keyReused();
  }

  /**
   * The keyed write, with its key marked as running here until it is settled. Another request with
   * the key may have started since lookup() (while this one waited for its rate limit): 409 then.
   * `work` is what the write is done for, handed to the store.
   */
  once(idempotent: AnyIdempotent, input: AnyInput, run: KeyedRun, work: Work): Promise<Reply> {
    const { key, fingerprint, nowMs } = run;
    this.assertNotRunning(key, fingerprint);
    this.running.set(key, fingerprint);
    const released = (): void => {
      this.running.delete(key);
    };
    const write: KeyedWrite = {
      key,
      fingerprint,
      nowMs,
      expiredBeforeMs: nowMs - this.policy.ttlMs,
    };
    let pending: Promise<KeyedOutcome<unknown>>;
    try {
      pending = idempotent.write(input, write, work);
    } catch (error) {
      released();
      throw error;
    }
    return pending.then(
      (keyed) => {
        released();
        return this.settle(idempotent, input, write, keyed);
      },
      (error: unknown) => {
        released();
        throw error;
      },
    );
  }

  private settle(
    idempotent: AnyIdempotent,
    input: AnyInput,
    write: KeyedWrite,
    keyed: KeyedOutcome<unknown>,
  ): Reply {
    switch (keyed.kind) {
      case 'in-flight':
        throw keyInFlight();
      case 'ran':
        // Kept only under rate limits: a retry over the limit is then answered from here.
        if (this.policy.keepRan === true)
          this.replays.set(
            write.key,
            write.fingerprint,
            keyed.outcome,
            write.nowMs + this.policy.ttlMs,
            Date.now(),
          );
        return idempotent.reply(input, keyed.outcome);
      case 'recorded':
        if (keyed.fingerprint !== write.fingerprint) throw keyReused();
        this.replays.set(
          write.key,
          keyed.fingerprint,
          keyed.outcome,
          keyed.recordedAtMs + this.policy.ttlMs,
          Date.now(),
        );
        return replay(idempotent, input, keyed.outcome);
    }
  }
}

/** The response to a recorded outcome, marked as a replay. */
function replay(idempotent: AnyIdempotent, input: AnyInput, outcome: unknown): Reply {
  let reply: Reply;
  try {
    reply = idempotent.reply(input, outcome);
  } catch (error) {
    // eslint-disable-next-line @typescript-eslint/only-throw-error -- not an Error on purpose (errors.ts)
    throw new Replayed(error, [REPLAYED_HEADER, 'true']);
  }
  return { ...reply, headers: { ...reply.headers, [REPLAYED_HEADER]: 'true' } };
}

/** Method, request-target exactly as sent, and (for an operation that reads one) a digest of the body. */
function fingerprintOf(req: IncomingMessage, body: Buffer | undefined): string {
  const target = `${req.method ?? 'GET'} ${req.url ?? '/'}`;
  return body === undefined
    ? target
    : `${target} sha256:${createHash('sha256').update(body).digest('base64url')}`;
}
