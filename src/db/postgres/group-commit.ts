// Group commit on PostgreSQL: writes queue in a Batcher (batcher.ts), the same queue as on SQLite,
// and each batch is decided and committed by one statement, a function installed by the store's
// migrations that takes the batch as arrays. One round trip and one commit (one WAL flush) serve
// the whole batch, and a hot row is locked once per batch instead of once per write.
//
// Correct with several instances: the function locks what it decides on (rows FOR UPDATE, or an
// advisory lock) before reading it, so each batch decides on the data as committed by the others.
//
// An operation that would fail alone (the function raised for it, say an id past the range of
// BIGINT) makes the whole statement fail, and PostgreSQL undoes all of it: nothing was applied.
// The operations of that batch then go again, one by one, each in its own statement, so that only
// the one at fault fails. A batch that fails for any other reason (the connection or the server
// went away, a time-out) fails every operation in it: none of them may be acknowledged.
import { isOutage } from './errors.js';
import type { Work } from '../../common/work.js';
import { Batcher, type Settled } from '../batcher.js';
import type { DatabaseTarget, StoreObserver } from '../store-observer.js';

const LIMITS = {
  opsMax: 1024,
  /** Under the default 1 GB a statement may carry, by far; it bounds what one batch holds in memory. */
  bytesMax: 4 * 1024 * 1024,
  /** While one batch commits, the next is already on the server, waiting for the lock. */
  inFlightMax: 2,
};

/** SQLSTATE classes of an error in the data one operation brought: another operation would not meet it. */
const FAILS_ALONE = ['22', '23', 'P0'];

export interface PostgresGroupCommitOptions<Op, Outcome> {
  /** Decides and commits `ops` in one statement; one outcome per operation, in order. */
  readonly decide: (ops: readonly Op[]) => Promise<readonly Outcome[]>;
  readonly sizeOf: (op: Op) => number;
  readonly observer?: StoreObserver;
  /** The database, for a tracer; and the one table a batch's writes change, if there is one. */
  readonly target?: DatabaseTarget;
  readonly collectionOf?: (ops: readonly Op[]) => string | undefined;
}

const UNNAMED: DatabaseTarget = { system: 'postgresql', namespace: undefined, server: undefined };
const NO_TABLE = (): undefined => undefined;

export interface PostgresGroupCommit<Op, Outcome> {
  /** Queues the write for the next batch; the deadline of `work` drops it while it is queued. */
  write(op: Op, work: Work): Promise<Outcome>;
  /** Refuses new writes, and resolves once every write asked before is answered. */
  close(): Promise<void>;
}

export function postgresGroupCommit<Op, Outcome>(
  options: PostgresGroupCommitOptions<Op, Outcome>,
): PostgresGroupCommit<Op, Outcome> {
  const { decide } = options;

  async function run(ops: readonly Op[]): Promise<readonly Settled<Outcome>[]> {
    try {
      return (await decide(ops)).map((outcome) => ({ ok: true, outcome }));
    } catch (error) {
      if (ops.length === 1 || !failsAlone(error)) throw error;
    }
    // In the order asked, as the batch would have run them.
    const settled: Settled<Outcome>[] = [];
    for (const op of ops) {
      try {
        const [outcome] = await decide([op]);
        settled.push({ ok: true, outcome: outcome as Outcome });
      } catch (error) {
        settled.push({
          ok: false,
          error: error instanceof Error ? error : new Error(String(error)),
        });
      }
    }
    return settled;
  }

  const batcher = new Batcher<Op, Outcome>(run, {
    ...LIMITS,
    sizeOf: options.sizeOf,
    failsQueued: isOutage,
    observer: options.observer,
    // A group commit's writes differ from one another: the batch is a BATCH, of no one statement.
    work: {
      ...(options.target ?? UNNAMED),
      operation: undefined,
      collectionOf: options.collectionOf ?? NO_TABLE,
    },
  });
  return { write: (op, work) => batcher.submit(op, work), close: () => batcher.close() };
}

function failsAlone(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && FAILS_ALONE.some((prefix) => code.startsWith(prefix));
}
