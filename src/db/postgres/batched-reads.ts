// Reads that arrive together share one query: point reads queue in a Batcher (batcher.ts) and
// leave as one `WHERE key = ANY($1)`, so a busy service makes one round trip, one parse and one
// plan per batch rather than per request. Several batches may be out at once, on several pooled
// connections; each read is answered from a query sent after it arrived, so it sees every write
// acknowledged before it was asked.
import { isOutage } from './errors.js';
import type { Work } from '../../common/work.js';
import { Batcher } from '../batcher.js';
import type { DatabaseTarget, StoreObserver } from '../store-observer.js';

const LIMITS = {
  opsMax: 512,
  bytesMax: 1024 * 1024,
  /** Leaves the rest of the pool to writes and to the readiness probe. */
  inFlightMax: 4,
};

export interface BatchedReads<K, V> {
  /**
   * Undefined when no row has that key. The deadline of `work` drops the read while it is queued;
   * its batch's query is cancelled once every read of the batch has passed its own.
   */
  read(key: K, work: Work): Promise<V | undefined>;
  /** Reads queued, not yet sent. */
  readonly queued: number;
  /** Refuses new reads, and resolves once every read asked before is answered. */
  close(): Promise<void>;
}

const UNNAMED: DatabaseTarget = { system: 'postgresql', namespace: undefined, server: undefined };

/**
 * `lookup` reads every key given in one query, bounded by the batch's `work`; keys it finds no row
 * for are absent from its map. `batchStarted`: a tracer's side of the store's observer (the rest
 * of it counts writes, not these reads); `target`: the database and the table read, for it.
 */
export function batchedReads<K, V>(
  lookup: (keys: readonly K[], work: Work) => Promise<ReadonlyMap<K, V>>,
  sizeOf: (key: K) => number,
  batchStarted?: StoreObserver['batchStarted'],
  target: DatabaseTarget & { readonly table?: string } = UNNAMED,
): BatchedReads<K, V> {
  const { table, ...database } = target;
  const batcher = new Batcher<K, V | undefined>(
    async (keys, work) => {
      const found = await lookup([...new Set(keys)], work);
      return keys.map((key) => ({ ok: true, outcome: found.get(key) }));
    },
    {
      ...LIMITS,
      sizeOf,
      failsQueued: isOutage,
      cancelsStarted: true,
      observer: { batchStarted },
      work: { ...database, operation: 'SELECT', collectionOf: () => table },
    },
  );
  return {
    read: (key, work) => batcher.submit(key, work),
    get queued() {
      return batcher.queued;
    },
    close: () => batcher.close(),
  };
}
