// Safe retries of the operations a route marks `idempotent`: a request that carries an
// Idempotency-Key runs once; its answer is recorded by the store in the same transaction as its
// write (the route asks for that), and any later request with that key gets that answer again,
// byte for byte, with `Idempotent-Replayed: true`, without running anything.
//
// What lives here, per process, is only what may be lost with the process:
// - the keys of requests running now: a second request with such a key gets 409 at once, instead
//   of queueing on the database (across instances the store decides, by a unique key);
// - a cache of the recorded answers that were asked for again. A recorded answer never changes
//   until its key expires, so the cache is right whichever instance recorded it, as long as its
//   entries expire with the key. Only answers replayed once are kept: a client that retries may
//   retry again, but most keyed writes are never retried, and keeping each of their answers for
//   thousands of requests would only move garbage into the old generation of the heap.
// A crash loses both, and that is safe: a retry then finds the recorded answer in the database,
// or finds nothing and runs.
import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { CodedError } from './errors.js';
import { idempotencyKeyInvalid, idempotencyKeyRequired, parseIdempotencyKey } from './idempotency-key.js';
import type { Reply, Route, RouteInput } from './route.js';

export interface IdempotencyPolicy {
  /** Refuse (400) a request to an idempotent operation that carries no key. */
  readonly required: boolean;
  /** How long a recorded answer is kept, and so how long its key replays it. */
  readonly ttlMs: number;
}

export const DEFAULT_IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;

/** A request's key, what makes it "the same request" (method, target and body digest), and its clock. */
export interface IdempotencyRequest {
  readonly key: string;
  readonly fingerprint: string;
  /** When it arrived: the time its answer is recorded with. */
  readonly nowMs: number;
  /** Records of the key from before this have expired: the key is free again. */
  readonly expiredBeforeMs: number;
}

/** An answer as the store records it: what the client got, byte for byte. */
export interface RecordedAnswer {
  readonly status: number;
  readonly contentType: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

/** What a store reports for a keyed write. */
export type KeyedOutcome =
  /** It ran now; its answer was recorded with its write. */
  | { readonly kind: 'ran'; readonly answer: RecordedAnswer; readonly recordedAtMs: number }
  /** The key was recorded before (by this or another instance): nothing ran. */
  | { readonly kind: 'recorded'; readonly fingerprint: string; readonly answer: RecordedAnswer; readonly recordedAtMs: number }
  /** Another instance is running a request with this key right now. */
  | { readonly kind: 'in-flight' };

export const keyInFlight = (): CodedError => new CodedError('IDEMPOTENCY_KEY_IN_FLIGHT', { 'Retry-After': '1' });
export const keyReused = (): CodedError => new CodedError('IDEMPOTENCY_KEY_REUSED');

const REPLAYED_HEADER = 'Idempotent-Replayed';
/** Replayed answers kept in memory; the oldest goes first. Each costs a few hundred bytes. */
const CACHE_ENTRIES_MAX = 10_000;

/** The reply a route gives for a keyed write: the recorded answer, and what the gate needs to know. */
export function keyedReply(request: IdempotencyRequest, outcome: KeyedOutcome): Reply {
  if (outcome.kind === 'in-flight') throw keyInFlight();
  const { answer, recordedAtMs } = outcome;
  const replayed = outcome.kind === 'recorded';
  return {
    status: answer.status,
    body: answer.body,
    contentType: answer.contentType,
    headers: answer.headers,
    recorded: { fingerprint: replayed ? outcome.fingerprint : request.fingerprint, recordedAtMs, replayed },
  };
}

interface Cached {
  readonly fingerprint: string;
  readonly replay: Reply;
  readonly expiresAtMs: number;
}

export class IdempotencyGate {
  /** Key → fingerprint of the request running with it in this process. */
  private readonly running = new Map<string, string>();
  private readonly recorded = new Map<string, Cached>();

  constructor(private readonly policy: IdempotencyPolicy) {}

  /** Runs an idempotent route's handler under the request's key, if it has one. */
  run(route: Route, input: RouteInput<Record<string, unknown>, unknown>, req: IncomingMessage, body: Buffer | undefined): Reply | Promise<Reply> {
    const values = req.headersDistinct['idempotency-key'];
    if (values === undefined) {
      if (this.policy.required) throw idempotencyKeyRequired();
      return route.handle(input);
    }
    const key = parseIdempotencyKey(values);
    if (key === undefined) throw idempotencyKeyInvalid();
    const fingerprint = fingerprintOf(req, body);

    const nowMs = Date.now();
    const cached = this.recorded.get(key);
    if (cached !== undefined) {
      if (cached.expiresAtMs > nowMs) {
        if (cached.fingerprint !== fingerprint) throw keyReused();
        return cached.replay;
      }
      this.recorded.delete(key);
    }
    const running = this.running.get(key);
    if (running !== undefined) throw running === fingerprint ? keyInFlight() : keyReused();

    this.running.set(key, fingerprint);
    const released = (): void => {
      this.running.delete(key);
    };
    let reply: Reply | Promise<Reply>;
    try {
      reply = route.handle({ ...input, idempotency: { key, fingerprint, nowMs, expiredBeforeMs: nowMs - this.policy.ttlMs } });
    } catch (error) {
      released();
      throw error;
    }
    return Promise.resolve(reply).then(
      (settled) => {
        released();
        return this.settle(key, fingerprint, settled);
      },
      (error: unknown) => {
        released();
        throw error;
      },
    );
  }

  private settle(key: string, fingerprint: string, reply: Reply): Reply {
    const recorded = reply.recorded;
    if (recorded === undefined) return reply;
    if (recorded.fingerprint !== fingerprint) throw keyReused();
    if (!recorded.replayed) return reply;
    const replay: Reply = { ...reply, headers: { ...reply.headers, [REPLAYED_HEADER]: 'true' } };
    const expiresAtMs = recorded.recordedAtMs + this.policy.ttlMs;
    if (expiresAtMs > Date.now()) {
      if (this.recorded.size >= CACHE_ENTRIES_MAX) this.recorded.delete(this.recorded.keys().next().value as string);
      this.recorded.set(key, { fingerprint, replay, expiresAtMs });
    }
    return replay;
  }
}

/** Method, request-target exactly as sent, and (for an operation that reads one) a digest of the body. */
function fingerprintOf(req: IncomingMessage, body: Buffer | undefined): string {
  const target = `${req.method ?? 'GET'} ${req.url ?? '/'}`;
  return body === undefined ? target : `${target} sha256:${createHash('sha256').update(body).digest('base64url')}`;
}
