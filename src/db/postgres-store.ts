// The one scaffold both PostgreSQL stores stand on, as sqlite-store.ts is for SQLite. It opens and
// migrates the database (postgres.ts) and gives the store its writes, group-committed: a batch is
// one statement of the store's own (`decide`), and a batch that holds keyed writes is one
// transaction that claims their keys and records their outcomes (idempotency-postgres.ts). Reads
// that arrive together share one query (postgres-batched-reads.ts), and expired key records are
// pruned in the background (idempotency-pruning.ts). What is left to a store is its SQL and how its
// rows read as outcomes.
import { DEFAULT_KEY_TTL_MS, type KeyedOutcome, type KeyedWrite } from '../common/keyed-writes.js';
import {
  entrySize,
  keyedBatches,
  pruneKeyRecords,
  type BatchEntry,
  type BatchResult,
} from './idempotency-postgres.js';
import { startKeyPruning } from './idempotency-pruning.js';
import type { Migration } from './migrations.js';
import { batchedReads, type BatchedReads } from './postgres-batched-reads.js';
import { openPostgres, type PostgresDatabase, type SqlSession } from './postgres.js';
import { postgresGroupCommit } from './postgres-group-commit.js';
import type { StoreOptions } from './store-options.js';

export interface PostgresStoreSpec<Op, Outcome> {
  readonly url: string;
  readonly service: string;
  readonly migrations: readonly Migration[];
  /** Runs once, in the transaction that creates the schema, so data is seeded only into a new database. */
  readonly seed: (session: SqlSession) => Promise<void>;
  /**
   * Decides and writes `ops` in one statement on `session`, one outcome each, in order. `keys`
   * holds each op's idempotency key, or null: a journal keeps it beside the write.
   */
  readonly decide: (
    session: SqlSession,
    ops: readonly Op[],
    keys: readonly (string | null)[],
  ) => Promise<readonly Outcome[]>;
  /** An operation's share of a group-commit batch's byte bound. */
  readonly sizeOf: (op: Op) => number;
  /** The store's table of idempotency records, and its claim function (claimKeysFunctionSql). */
  readonly keysTable: string;
  readonly claimFunction: string;
  readonly options: StoreOptions;
}

export interface PostgresStore<Op, Outcome> {
  readonly db: PostgresDatabase;
  /** Reads that arrive together, one query a batch: `lookup` reads every key given at once. */
  reads<K, V>(
    lookup: (keys: readonly K[]) => Promise<ReadonlyMap<K, V>>,
    sizeOf: (key: K) => number,
  ): BatchedReads<K, V>;
  write(op: Op): Promise<Outcome>;
  /** The write under `key`, unless the key has a live record; `recorded` is what its outcome records. */
  writeOnce<Recorded>(
    op: Op,
    key: KeyedWrite,
    recorded: (outcome: Outcome) => Recorded,
  ): Promise<KeyedOutcome<Recorded>>;
  /** Deletes up to PRUNE_BATCH_ROWS expired key records; returns how many. */
  pruneKeys(expiredBeforeMs: number): Promise<number>;
  /** For /readyz: the database answers and writes work. */
  ready(): Promise<boolean>;
  /** Answers every write and read asked before, then closes the pool. */
  close(): Promise<void>;
}

export async function openPostgresStore<Op, Outcome>(
  spec: PostgresStoreSpec<Op, Outcome>,
): Promise<PostgresStore<Op, Outcome>> {
  const { options } = spec;
  const db = await openPostgres({
    url: spec.url,
    service: spec.service,
    migrations: spec.migrations,
    seed: spec.seed,
    log: options.log,
    observer: options.observer,
    poolSize: options.poolSize,
    poolWaitMs: options.poolWaitMs,
    pooler: options.pooler,
  });
  // Each keyed entry records what its own mapper makes of its outcome; the batch does not look at
  // it.
  type Entry = BatchEntry<Op, Outcome, unknown>;
  const writes = postgresGroupCommit<Entry, BatchResult<Outcome, unknown>>({
    sizeOf: entrySize(spec.sizeOf),
    observer: options.observer,
    decide: keyedBatches<Op, Outcome, unknown>({
      db,
      table: spec.keysTable,
      claimFunction: spec.claimFunction,
      decide: spec.decide,
    }),
  });
  const readers: BatchedReads<unknown, unknown>[] = [];
  const pruneKeys = (expiredBeforeMs: number): Promise<number> =>
    pruneKeyRecords(db.writes, spec.keysTable, expiredBeforeMs);
  const pruning = startKeyPruning(
    pruneKeys,
    options.idempotencyTtlMs ?? DEFAULT_KEY_TTL_MS,
    options.log,
  );

  return {
    db,
    reads(lookup, sizeOf) {
      const reader = batchedReads(lookup, sizeOf, options.observer?.batchStarted);
      readers.push(reader as BatchedReads<unknown, unknown>);
      return reader;
    },
    async write(op) {
      const result = await writes.write({ op });
      if (result.kind !== 'plain')
        throw new Error(`${spec.service}: an unkeyed write came back as a keyed one`);
      return result.outcome;
    },
    async writeOnce<Recorded>(op: Op, key: KeyedWrite, recorded: (outcome: Outcome) => Recorded) {
      const result = await writes.write({ op, keyed: { key, outcome: recorded } });
      if (result.kind === 'plain')
        throw new Error(`${spec.service}: a keyed write came back without its key`);
      return result as KeyedOutcome<Recorded>;
    },
    pruneKeys,
    ready: () => db.ping(),
    async close() {
      await pruning.stop();
      await Promise.all([writes.close(), ...readers.map((reader) => reader.close())]);
      await db.close();
    },
  };
}
