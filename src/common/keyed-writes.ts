// A write under an Idempotency-Key, and what became of it: the words the HTTP layer (which reads
// the key, src/features/idempotency/gate.ts) and storage (which records the outcome with the write,
// src/db/idempotency-records.ts) share, declared once and knowing neither.
//
// A store records a keyed write's *outcome*, plain data such as `{kind: "insufficient", balance:
// 5}`, never an HTTP response: the route renders the first response and every replay from it, in
// the error format the service runs with at the time.

/** How long a key's record lives unless the service is told otherwise (--idempotency-ttl). */
export const DEFAULT_KEY_TTL_MS = 24 * 60 * 60 * 1000;

/** A keyed write as it travels to a store (and to a writer thread): plain data only. */
export interface KeyedWrite {
  readonly key: string;
  /** What makes a request "the same request": method, target and body digest. */
  readonly fingerprint: string;
  /** When the request arrived: the time its outcome is recorded with. */
  readonly nowMs: number;
  /** Records from before this are expired: absent to lookups, and replaced by a new record. */
  readonly expiredBeforeMs: number;
}

/**
 * What became of a write whose store outcome is `O`, under a key or not: a store has one verb per
 * write, and a write without a key always runs.
 */
export type KeyedOutcome<O> =
  /** It ran now; under a key, its outcome was recorded with the write, at the key's nowMs. */
  | { readonly kind: 'ran'; readonly outcome: O }
  /** The key was recorded before (by this or another instance) for `fingerprint`: nothing ran. */
  | {
      readonly kind: 'recorded';
      readonly fingerprint: string;
      readonly outcome: O;
      readonly recordedAtMs: number;
    }
  /** Another instance is running a request with this key right now: nothing ran. */
  | { readonly kind: 'in-flight' };

/** The outcome of a write made without a key: such a write always runs. */
export function unkeyedOutcome<O>(written: KeyedOutcome<O>): O {
  if (written.kind !== 'ran') throw new Error(`a write without a key came back ${written.kind}`);
  return written.outcome;
}
