// The one scaffold both PostgreSQL stores stand on, as sqlite-store.ts is for SQLite. It opens and
// migrates the database (postgres.ts) and gives the store its writes, group-committed: a batch is
// one statement of the store's own (`decide`), and a batch that holds keyed writes is one
// transaction that claims their keys and records their outcomes (idempotency-postgres.ts). Reads
// that arrive together share one query (postgres-batched-reads.ts), which carries a rider's work
// when the store is given one (ride-along.ts), and expired key records are pruned in the background
// (idempotency-pruning.ts). What is left to a store is its SQL and how its rows read as outcomes.
import type { Work } from '../../common/work.js';
import {
  DEFAULT_KEY_TTL_MS,
  type KeyedOutcome,
  type KeyedWrite,
} from '../../common/keyed-writes.js';
import { entrySize, keyedBatches, pruneKeyRecords, type BatchEntry } from './idempotency.js';
import { startKeyPruning } from '../idempotency-pruning.js';
import type { Migration } from '../migrations.js';
import { batchedReads, type BatchedReads } from './batched-reads.js';
import {
  openPostgres,
  type PostgresDatabase,
  type SqlScalar,
  type SqlSession,
} from './postgres.js';
import { carry, carryingSql } from './ride-along.js';
import { postgresGroupCommit } from './group-commit.js';
import { postgresTarget } from './target.js';
import type { StoreOptions } from '../store-options.js';

export interface PostgresStoreSpec<Op, Result, Outcome> {
  readonly url: string;
  readonly service: string;
  readonly migrations: readonly Migration[];
  /** Runs once, in the transaction that creates the schema, so data is seeded only into a new database. */
  readonly seed: (session: SqlSession) => Promise<void>;
  /**
   * Decides and writes `ops` in one statement on `session`, one result each, in order. `keys`
   * holds each op's idempotency key, or null: a journal keeps it beside the write.
   */
  readonly decide: (
    session: SqlSession,
    ops: readonly Op[],
    keys: readonly (string | null)[],
  ) => Promise<readonly Result[]>;
  /** A write's outcome, read from its result: plain data, recorded as JSON under a key. */
  readonly outcome: (op: Op, result: Result) => Outcome;
  /** An operation's share of a group-commit batch's byte bound. */
  readonly sizeOf: (op: Op) => number;
  /** The store's table of idempotency records, and its claim function (claimKeysFunctionSql). */
  readonly keysTable: string;
  readonly claimFunction: string;
  /** The one table an unkeyed write changes, for a tracer; none: a write changes several. */
  readonly writeTable?: string;
  readonly options: StoreOptions;
}

/** A batched read: a query of every key at once, given as an array in its one parameter, $1. */
export interface ReadQuery<K, Row, V> {
  /** The prepared statement's name; the name of its form that carries a rider starts with it. */
  readonly name: string;
  readonly sql: string;
  /** The table it reads, for a tracer. */
  readonly table: string;
  /** The query's columns, by name. */
  readonly columns: readonly string[];
  /** The key a row is of, and what a read of that key is given. */
  readonly keyOf: (row: Row) => K;
  readonly valueOf: (row: Row) => V;
  /** A key's share of a batch's byte bound. */
  readonly sizeOf: (key: K) => number;
}

export interface PostgresStore<Op, Outcome> {
  readonly db: PostgresDatabase;
  /** Reads that arrive together, one query a batch; with a rider, the query carries its work. */
  reads<K extends SqlScalar, Row extends object, V>(
    query: ReadQuery<K, Row, V>,
  ): BatchedReads<K, V>;
  /**
   * The write, group-committed, under `key` when it has one: then it runs only if the key has no
   * live record, and its outcome is recorded with it. The deadline of `work` drops it while it is
   * queued.
   */
  write(op: Op, key: KeyedWrite | undefined, work: Work): Promise<KeyedOutcome<Outcome>>;
  /** Deletes up to PRUNE_BATCH_ROWS expired key records; returns how many. */
  pruneKeys(expiredBeforeMs: number): Promise<number>;
  /** For /readyz: the database answers and writes work. */
  ready(): Promise<boolean>;
  /** Answers every write and read asked before, then closes the pool. */
  close(): Promise<void>;
}

export async function openPostgresStore<Op, Result, Outcome>(
  spec: PostgresStoreSpec<Op, Result, Outcome>,
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
  const target = postgresTarget(spec.url);
  const writes = postgresGroupCommit<BatchEntry<Op>, KeyedOutcome<Outcome>>({
    sizeOf: entrySize(spec.sizeOf),
    observer: options.observer,
    target,
    // A keyed write records its key in the keys table too.
    collectionOf: (entries) =>
      entries.every((entry) => entry.key === undefined) ? spec.writeTable : undefined,
    decide: keyedBatches<Op, Result, Outcome>({
      db,
      table: spec.keysTable,
      claimFunction: spec.claimFunction,
      decide: spec.decide,
      outcome: spec.outcome,
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
    reads<K extends SqlScalar, Row extends object, V>(query: ReadQuery<K, Row, V>) {
      const alone = db.prepared<Row>(query.name, query.sql);
      const { rider, observer } = options;
      const carrying =
        rider === undefined
          ? undefined
          : {
              rider,
              combined: db.prepared<Row>(
                `${query.name}_${rider.name}`,
                carryingSql({ ...query, parameters: 1 }, rider),
                // Cancelled by its reads' deadline as a read is; its writes are the rider's, whose
                // failure is the rider's (ride-along.ts), and tell nothing of the store's writes.
                'read',
              ),
            };
      const lookup = async (keys: readonly K[], work: Work): Promise<ReadonlyMap<K, V>> => {
        const rows =
          carrying === undefined
            ? (await alone([keys], work)).rows
            : await carry(carrying.rider, [keys], alone, carrying.combined, work);
        return new Map(rows.map((row) => [query.keyOf(row), query.valueOf(row)]));
      };
      const reader = batchedReads(lookup, query.sizeOf, observer?.batchStarted?.bind(observer), {
        ...target,
        table: query.table,
      });
      rider?.waitFor(() => reader.queued > 0);
      readers.push(reader);
      return reader;
    },
    write: (op, key, work) => writes.write(key === undefined ? { op } : { op, key }, work),
    pruneKeys,
    ready: () => db.ping(),
    async close() {
      await pruning.stop();
      await Promise.all([writes.close(), ...readers.map((reader) => reader.close())]);
      await db.close();
    },
  };
}
