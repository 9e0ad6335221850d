// The outcomes of keys that were replayed once, kept in memory so that a client that retries again
// gets its response without a round trip to the database. A recorded outcome never changes until
// its key expires, so an entry is right whichever instance recorded it, as long as it expires with
// the key. Only outcomes replayed once are kept: most keyed writes are never retried, and keeping
// each of them would only fill the heap.
//
// The cache is bounded by the bytes it holds, not by a count of entries: an entry is the key, the
// request's fingerprint (its target may be long) and the outcome, which is small plain data (the
// response's body is rendered anew from the request and the outcome on each replay). The oldest
// entries go first; an entry larger than a set share of the budget is never kept.

/** What the cache may hold, by its estimate of the bytes each entry costs. */
export const REPLAY_CACHE_BYTES_MAX = 4 * 1024 * 1024;
/** An entry larger than this is not cached: one client cannot evict every other with a few. */
export const REPLAY_ENTRY_BYTES_MAX = REPLAY_CACHE_BYTES_MAX / 64;
/** A Map entry and the entry's object, beside its strings. */
const ENTRY_OVERHEAD_BYTES = 160;

interface Entry {
  readonly fingerprint: string;
  readonly outcome: unknown;
  readonly expiresAtMs: number;
  readonly bytes: number;
}

export class ReplayCache {
  private readonly entries = new Map<string, Entry>();
  private held = 0;

  constructor(private readonly bytesMax = REPLAY_CACHE_BYTES_MAX) {}

  /** The bytes the entries are estimated to hold. */
  get bytes(): number {
    return this.held;
  }

  get size(): number {
    return this.entries.size;
  }

  /** The live entry of `key`; an expired one is dropped. */
  get(key: string, nowMs: number): Entry | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined || entry.expiresAtMs > nowMs) return entry;
    this.delete(key, entry);
    return undefined;
  }

  /** Keeps the outcome until `expiresAtMs`, if it is live and small enough, evicting the oldest entries to make room. */
  set(
    key: string,
    fingerprint: string,
    outcome: unknown,
    expiresAtMs: number,
    nowMs: number,
  ): void {
    if (expiresAtMs <= nowMs) return;
    // Strings are counted at two bytes a character (V8 keeps some at one), the outcome as its JSON.
    const bytes =
      2 * (key.length + fingerprint.length + JSON.stringify(outcome).length) + ENTRY_OVERHEAD_BYTES;
    if (bytes > Math.min(REPLAY_ENTRY_BYTES_MAX, this.bytesMax)) return;
    const old = this.entries.get(key);
    if (old !== undefined) this.delete(key, old);
    for (const [oldest, entry] of this.entries) {
      if (this.held + bytes <= this.bytesMax) break;
      this.delete(oldest, entry);
    }
    this.entries.set(key, { fingerprint, outcome, expiresAtMs, bytes });
    this.held += bytes;
  }

  private delete(key: string, entry: Entry): void {
    this.entries.delete(key);
    this.held -= entry.bytes;
  }
}
