// The one scaffold both SQLite stores stand on. It opens and migrates the database and gives the
// store two things: reads on this thread's connection, and writes. For `:memory:` the writes run
// here, each in its own IMMEDIATE transaction (a worker cannot open this thread's :memory:
// database, and there is no disk to wait for). For a file they are group-committed by a worker
// thread (group-commit.ts) and reads share a read transaction per turn (sqlite-turn-reads.ts).
//
// A write under an Idempotency-Key (as on PostgreSQL, the same verb with a key) records its
// outcome in the transaction of the write (writes.ts).
//
// Every failure the database causes becomes a store error (store-errors.ts) and is reported to the
// store's health (store-health.ts), which decides readiness and writes the log line, once. Expired
// idempotency records are pruned in the background (idempotency-pruning.ts), by a write.
import { UNBOUNDED_WORK, type Work } from '../../common/work.js';
import {
  DEFAULT_KEY_TTL_MS,
  type KeyedOutcome,
  type KeyedWrite,
} from '../../common/keyed-writes.js';
import type { Logger } from '../../observe/log.js';
import { oneAtATime } from './batch-writes.js';
import { GroupCommitWriter } from './group-commit.js';
import { startKeyPruning } from '../idempotency-pruning.js';
import type { Migration } from '../migrations.js';
import { WRITE_PROBE_STATEMENTS } from '../migrations.js';
import { openSqlite, sqliteResponds, type SqliteDatabase } from './sqlite.js';
import { translateSqliteError } from './errors.js';
import { directReads, turnScopedReads, type TurnReads } from './turn-reads.js';
import { StoreError } from '../store-errors.js';
import { StoreHealth } from '../store-health.js';
import type { StoreObserver } from '../store-observer.js';
import {
  prepareEntries,
  sqliteEntrySize,
  type SqliteEntry,
  type SqliteEntryOutcome,
  type SqliteWrites,
} from './writes.js';

export interface SqliteStoreSpec<Op, Result, Outcome> {
  /** `:memory:` for a throw-away database, else a file path. */
  readonly location: string;
  readonly service: string;
  readonly migrations: readonly Migration[];
  /** Runs once, in the transaction that creates the schema, so data is seeded only into a new database. */
  readonly seed: (db: SqliteDatabase) => void;
  /** The store's writes, prepared on a connection: here for `:memory:`, in the writer thread for a file. */
  readonly writes: SqliteWrites<Op, Result, Outcome>;
  /** An operation's share of a group-commit batch's byte bound. */
  readonly sizeOf: (op: Op) => number;
  /** The writer thread's module: one that calls serveSqliteWrites() with the same writes. */
  readonly writerScript: URL;
  readonly synchronous?: 'FULL' | 'OFF';
  readonly log?: Logger;
  readonly observer?: StoreObserver;
  /** How long idempotency records live, for a store that keeps them (writes.keys). */
  readonly keyTtlMs?: number;
}

export interface SqliteStore<Op, Outcome> {
  /** This thread's connection, to prepare the store's reads on. */
  readonly db: SqliteDatabase;
  /** Runs a read on this thread's connection. */
  read<T>(read: () => T): T;
  /**
   * The write, under `key` when it has one: then it runs only if the key has no live record, and
   * its outcome is recorded with it. On a file it is group-committed, and the deadline of `work`
   * drops it while it is queued.
   */
  write(op: Op, key: KeyedWrite | undefined, work: Work): Promise<KeyedOutcome<Outcome>>;
  /** Deletes up to PRUNE_BATCH_ROWS expired key records; returns how many (0 for a store without keys). */
  pruneKeys(expiredBeforeMs: number): Promise<number>;
  /** For /readyz: the database answers, the writer lives, and writes are not known to fail. */
  ready(): Promise<boolean>;
  close(): Promise<void>;
}

interface Writes<Entry, Outcome> {
  write(entry: Entry, work: Work): Promise<Outcome>;
  readonly healthy: boolean;
  close(): Promise<void>;
}

export async function openSqliteStore<Op, Result, Outcome>(
  spec: SqliteStoreSpec<Op, Result, Outcome>,
): Promise<SqliteStore<Op, Outcome>> {
  const { location } = spec;
  const synchronous = spec.synchronous ?? 'FULL';
  const db = await openSqlite({
    location,
    service: spec.service,
    migrations: spec.migrations,
    seed: spec.seed,
    synchronous,
  });
  const health = new StoreHealth(spec.log, spec.observer);
  const fault = (error: unknown): unknown => {
    const translated = translateSqliteError(error);
    if (translated instanceof StoreError) health.failed(translated);
    return translated;
  };

  type Entry = SqliteEntry<Op>;
  type EntryOutcome = SqliteEntryOutcome<Result, Outcome>;
  let reads: TurnReads = directReads;
  let writes: Writes<Entry, EntryOutcome>;
  if (location === ':memory:') {
    const inThread = oneAtATime(db, prepareEntries(spec.writes)(db));
    writes = {
      write: (entry) => {
        try {
          return Promise.resolve(inThread.immediate(entry));
        } catch (error) {
          return Promise.reject(error);
        }
      },
      healthy: true,
      close: () => Promise.resolve(),
    };
  } else {
    reads = turnScopedReads(db, (error) => fault(error));
    writes = new GroupCommitWriter<Entry, EntryOutcome>(
      spec.writerScript,
      { location, synchronous },
      {
        sizeOf: sqliteEntrySize(spec.sizeOf),
        onCommitted: reads.end,
        observer: spec.observer,
      },
    );
  }

  /**
   * While writes fail (disk full, read-only), readiness writes something that changes nothing, to
   * learn when they work again. It runs on this thread's connection with no busy wait, so that a
   * writer holding the lock makes it fail at once (try again at the next check) instead of
   * stalling.
   */
  function probeWrites(): boolean {
    reads.end();
    const busyTimeout = db.pragma('busy_timeout', { simple: true }) as number;
    db.pragma('busy_timeout = 0');
    try {
      db.transaction(() => {
        for (const statement of WRITE_PROBE_STATEMENTS) db.prepare(statement).run();
      }).immediate();
      health.succeeded('write');
      return true;
    } catch (error) {
      fault(error);
      return false;
    } finally {
      db.pragma(`busy_timeout = ${busyTimeout}`);
    }
  }

  function run(entry: Entry, work: Work): Promise<EntryOutcome> {
    return writes.write(entry, work).then(
      (outcome) => {
        health.succeeded('write');
        return outcome;
      },
      (error: unknown) => {
        throw fault(error);
      },
    );
  }

  // The writer answers each entry by its kind (writes.ts): an unkeyed write's result, whose
  // outcome is read here, or what became of a keyed one.
  const { outcome } = spec.writes;
  function write(op: Op, key: KeyedWrite | undefined, work: Work): Promise<KeyedOutcome<Outcome>> {
    if (key !== undefined) return run({ op, key }, work) as Promise<KeyedOutcome<Outcome>>;
    return run({ op }, work).then((result) => ({
      kind: 'ran',
      outcome: outcome(op, result as Result),
    }));
  }
  const keeps = spec.writes.keys !== undefined;
  async function pruneKeys(expiredBeforeMs: number): Promise<number> {
    if (!keeps) return 0;
    const pruned = await run({ pruneBefore: expiredBeforeMs }, UNBOUNDED_WORK);
    if (typeof pruned !== 'number')
      throw new Error(`${spec.service}: pruning answered ${typeof pruned}, not a count of rows`);
    return pruned;
  }
  const pruning = keeps
    ? startKeyPruning(pruneKeys, spec.keyTtlMs ?? DEFAULT_KEY_TTL_MS, spec.log)
    : undefined;

  return {
    db,
    read(read) {
      try {
        const result = reads.read(read);
        health.succeeded('read');
        return result;
      } catch (error) {
        throw fault(error);
      }
    },
    write,
    pruneKeys,
    ready() {
      if (!writes.healthy || !sqliteResponds(db, location)) return Promise.resolve(false);
      health.succeeded('read');
      return Promise.resolve(health.awaitingWrite ? probeWrites() && health.ready : health.ready);
    },
    async close() {
      try {
        await pruning?.stop();
        await writes.close();
      } finally {
        reads.end();
        db.close();
      }
    },
  };
}
