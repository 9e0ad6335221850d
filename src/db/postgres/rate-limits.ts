// Rate limits shared by every instance on one PostgreSQL database: one row per client and kind
// holding its GCRA theoretical arrival time (src/rate-limits/decision.ts), decided by one atomic
// statement, INSERT … ON CONFLICT DO UPDATE … RETURNING, that reads the time from the database's
// own clock, so that the instances' clocks do not matter. Decisions that arrive together share that
// statement (a Batcher, as the batched reads): a client met several times in one batch is one row
// with a count, since one statement may not update a row twice. Where a store's batch of reads
// leaves in the same turn, that statement rides in the read's (ride-along.ts): a read and its
// decision then cost one round trip, the decisions' own statement going only when no read does.
//
// The table is UNLOGGED: its rows are worth nothing after a crash (the server empties it then, and
// every client has its whole burst again), and its updates then cost no WAL. It has no index
// beside its key, so that an update stays a HOT one. It is bounded by its own pruning
// (rate-limits-pruning.ts): a row whose time is past means the same as no row, and rounds a
// quarter of a window apart delete such rows, a range of pages at a time. Its migrations are
// counted under a service name of their own ('rate-limits').
import type { Logger } from '../../observe/log.js';
import { decisionOf, type Decision } from '../../rate-limits/decision.js';
import { LimiterUnavailable, type RateLimiter } from '../../rate-limits/limiter.js';
import {
  REQUEST_KINDS,
  sweepEveryMs,
  windowMs,
  type RateLimits,
  type RequestKind,
} from '../../rate-limits/policy.js';
import pg from 'pg';
import { UNBOUNDED_WORK } from '../../common/work.js';
import { Batcher, type Settled } from '../batcher.js';
import type { Boarding, Rider, RiderRow } from './ride-along.js';
import type { Migration } from '../migrations.js';
import { isOutage } from './errors.js';
import { openPostgres } from './postgres.js';
import { startRateLimitPruning } from '../rate-limits-pruning.js';
import type { Pooler } from './pooler.js';
import { StoreError } from '../store-errors.js';

export const RATE_LIMITS_SERVICE = 'rate-limits';

export const RATE_LIMITS_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    sql: `CREATE UNLOGGED TABLE rate_limits (
      key TEXT PRIMARY KEY,
      tat DOUBLE PRECISION NOT NULL,
      admitted INTEGER NOT NULL
    )`,
  },
];

/** Pages of the table one pruning statement covers: 1 MiB, some 10,000 rows. */
export const PRUNE_PAGES = 128;
/**
 * After this many rows deleted, the pruning round also vacuums the table, so that their space is
 * reused and the table's bytes stay bounded with its rows: autovacuum wakes once a minute, in which
 * a flood of new clients can leave millions of dead rows. SKIP_LOCKED: another instance's vacuum
 * in progress does the same work, and this one does not wait for it.
 */
export const VACUUM_AFTER_ROWS = 10_000;
const VACUUM_SQL = 'VACUUM (SKIP_LOCKED) rate_limits';
/** A vacuum may take longer than a statement of the pool may (1.5 s); past this it is given up. */
const VACUUM_TIMEOUT_MS = 60_000;

/**
 * VACUUM on a connection of its own: the pool's connections bound each statement to 1.5 s, which
 * a vacuum under load passes (it was then cancelled, and the table's bytes grew with each wave of
 * clients), and through a transaction pooler every write of the pool runs in a transaction, where
 * VACUUM cannot. A lone statement on a new connection runs outside any, with no startup parameter
 * a pooler would refuse; the time-out is the client's.
 */
async function vacuum(url: string): Promise<void> {
  const client = new pg.Client({
    connectionString: url,
    connectionTimeoutMillis: 5_000,
    query_timeout: VACUUM_TIMEOUT_MS,
  });
  client.on('error', () => undefined); // the statement's own failure is what the round reports
  await client.connect();
  try {
    await client.query(VACUUM_SQL);
  } finally {
    await client.end().catch(() => undefined);
  }
}

const LIMITS = {
  opsMax: 1024,
  bytesMax: 1024 * 1024,
  /**
   * One batch out at a time: batches carried in reads' statements (ride-along.ts) would otherwise
   * wait for one another's row locks inside those statements, holding up the reads with them, and
   * the decisions that gather meanwhile leave together as one upsert a key.
   */
  inFlightMax: 1,
};
const POOL_SIZE = 4;
/**
 * Decisions wait at most this long for a store's queued reads to carry them (ride-along.ts): about
 * a read's round trip under load, within which one of the reads' slots frees.
 */
const CARRIER_WAIT_MS = 2;

/** The statement's RETURNING, named apart from any read's columns that may carry it. */
const DECIDED_COLUMNS = ['decided_key', 'decided_tat', 'decided_admitted', 'decided_now_ms'];
const DECIDED_VALUES = ['l.key', 'l.tat', 'l.admitted', '(SELECT ms FROM now)'];

/**
 * One statement for a batch: per key, `n` requests at once, emission interval `iv` ms, burst `b`.
 * `admitted` is how many of the n this decision admitted (GCRA for n arrivals at once: as many as
 * keep the time within b intervals of now). The database's clock is read once, as `now`. Its
 * parameters are numbered from `first`, so that a read's statement may carry it (ride-along.ts).
 */
const decideSql = (first: number): string => {
  const [keys, counts, intervals, bursts] = [0, 1, 2, 3].map((i) => `$${first + i}`);
  return `WITH now AS (SELECT (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS ms),
  req AS (SELECT * FROM unnest(${keys}::text[], ${counts}::int[], ${intervals}::float8[], ${bursts}::int[]) AS r(key, n, iv, b))
INSERT INTO rate_limits AS l (key, tat, admitted)
  SELECT req.key, now.ms + least(req.n, req.b) * req.iv, least(req.n, req.b) FROM req, now
ON CONFLICT (key) DO UPDATE SET (tat, admitted) = (
  SELECT CASE WHEN d.k > 0 THEN d.base + d.k * d.iv ELSE l.tat END, d.k
  FROM (
    SELECT greatest(l.tat, now.ms) AS base, req.iv,
      greatest(0, least(req.n, floor((now.ms + req.b * req.iv - greatest(l.tat, now.ms)) / req.iv + 1e-9)))::int AS k
    FROM req, now WHERE req.key = EXCLUDED.key
  ) d
)
RETURNING ${DECIDED_COLUMNS.map((column, i) => `${DECIDED_VALUES[i] as string} AS ${column}`).join(', ')}`;
};

const PAGES_SQL = `SELECT (pg_relation_size('rate_limits') / current_setting('block_size')::int)::int AS pages`;

/** The past rows of a range of pages ([$1, $2)), found by a TID range scan; the clock read once. */
const PRUNE_SQL = `WITH now AS (SELECT (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS ms)
DELETE FROM rate_limits USING now WHERE rate_limits.ctid >= $1::tid AND rate_limits.ctid < $2::tid AND rate_limits.tat <= now.ms`;

interface Ask {
  readonly key: string;
  readonly intervalMs: number;
  readonly burst: number;
}

export interface PostgresRateLimiterOptions {
  readonly url: string;
  /** The service whose clients these are: both services may share one database and one table. */
  readonly service: string;
  readonly limits: RateLimits;
  readonly log?: Logger;
  readonly pooler?: Pooler;
}

export interface PostgresRateLimiter extends RateLimiter {
  /** Deletes every row whose time is past (a round of pruning, which also runs by itself); returns how many. */
  prune(): Promise<number>;
  /** The decisions as a rider (ride-along.ts): a store's reads on the same database carry them. */
  readonly rider: Rider;
}

export async function openPostgresRateLimiter(
  options: PostgresRateLimiterOptions,
): Promise<PostgresRateLimiter> {
  const db = await openPostgres({
    url: options.url,
    service: RATE_LIMITS_SERVICE,
    migrations: RATE_LIMITS_MIGRATIONS,
    seed: () => Promise.resolve(),
    log: options.log,
    poolSize: POOL_SIZE,
    // A decision waits no longer than a client would for its response to matter.
    poolWaitMs: 2_000,
    pooler: options.pooler,
  });
  const decide = db.prepared<RiderRow>('rate_limits_decide', decideSql(1));
  const carriers: (() => boolean)[] = [];
  const decideAlone = async (asks: readonly Ask[]): Promise<Settled<Decision>[]> =>
    decisionsOf(asks, (await decide(valuesOf(asks), UNBOUNDED_WORK)).rows);
  const batcher = new Batcher<Ask, Decision>(decideAlone, {
    ...LIMITS,
    sizeOf: (ask) => ask.key.length + 24,
    failsQueued: isOutage,
    carried: { waiting: () => carriers.some((queued) => queued()), waitMs: CARRIER_WAIT_MS },
  });
  const rider: Rider = {
    name: 'decided',
    statement: decideSql,
    columns: DECIDED_COLUMNS,
    board() {
      let boarding: Boarding | undefined;
      batcher.sendThrough(
        (asks) =>
          new Promise((resolve, reject) => {
            boarding = {
              values: valuesOf(asks),
              landed(rows) {
                try {
                  resolve(decisionsOf(asks, rows));
                } catch (error) {
                  reject(error);
                }
              },
              // Not done: decided again alone, unless the database is away (that fails alike).
              failed: (error) => {
                if (isOutage(error)) reject(error);
                else decideAlone(asks).then(resolve, reject);
              },
            };
          }),
      );
      return boarding;
    },
    waitFor: (queued) => void carriers.push(queued),
  };
  let deletedSinceVacuum = 0;
  const prune = async (stopped: () => boolean = () => false): Promise<number> => {
    const pages = (await db.query<{ pages: number }>(PAGES_SQL)).rows[0]?.pages ?? 0;
    let deleted = 0;
    for (let first = 0; first < pages && !stopped(); first += PRUNE_PAGES) {
      deleted += (await db.writes.query(PRUNE_SQL, [`(${first},0)`, `(${first + PRUNE_PAGES},0)`]))
        .rowCount;
    }
    deletedSinceVacuum += deleted;
    if (deletedSinceVacuum >= VACUUM_AFTER_ROWS && !stopped()) {
      deletedSinceVacuum = 0;
      await vacuum(options.url);
    }
    return deleted;
  };
  // The longest window says when the last row of a client admitted nothing since is past.
  const longestWindowMs = Math.max(
    ...REQUEST_KINDS.map((kind) =>
      options.limits[kind] === undefined ? 0 : windowMs(options.limits[kind]),
    ),
  );
  const pruning = startRateLimitPruning(prune, sweepEveryMs(longestWindowMs), options.log);
  const intervals = {
    writes:
      options.limits.writes === undefined ? undefined : 1000 / options.limits.writes.perSecond,
    reads: options.limits.reads === undefined ? undefined : 1000 / options.limits.reads.perSecond,
  };
  return {
    decide(kind: RequestKind, client: string) {
      const rate = options.limits[kind];
      const intervalMs = intervals[kind];
      if (rate === undefined || intervalMs === undefined) throw new Error(`no limit on ${kind}`);
      // A decision is the stage's, before any handler: no request's deadline bounds it.
      return batcher
        .submit(
          { key: `${options.service}:${kind}:${client}`, intervalMs, burst: rate.burst },
          UNBOUNDED_WORK,
        )
        .catch(unavailable);
    },
    prune: () => prune(),
    rider,
    async close() {
      await pruning.stop();
      await batcher.close();
      await db.close();
    },
  };
}

/** A store fault (the database away, saturated, read-only) as the limiter's own; anything else stays a bug. */
function unavailable(error: unknown): never {
  if (error instanceof StoreError)
    throw new LimiterUnavailable(`the rate-limit store cannot decide: ${error.message}`, {
      cause: error,
    });
  throw error;
}

/** The batch's statement's parameters: the requests of each key counted together. */
function valuesOf(asks: readonly Ask[]): (readonly string[] | readonly number[])[] {
  const counts = new Map<string, { readonly ask: Ask; n: number }>();
  for (const ask of asks) {
    const seen = counts.get(ask.key);
    if (seen === undefined) counts.set(ask.key, { ask, n: 1 });
    else seen.n += 1;
  }
  const groups = [...counts.values()];
  return [
    groups.map((group) => group.ask.key),
    groups.map((group) => group.n),
    groups.map((group) => group.ask.intervalMs),
    groups.map((group) => group.ask.burst),
  ];
}

/** Each request's decision, in order, from the statement's row for its key (DECIDED_COLUMNS). */
function decisionsOf(asks: readonly Ask[], rows: readonly RiderRow[]): Settled<Decision>[] {
  const byKey = new Map(rows.map((row) => [row.decided_key, row]));
  // The requests of one key in the batch, in their order: the first `admitted` of them are.
  const served = new Map<string, number>();
  return asks.map((ask) => {
    const row = byKey.get(ask.key);
    if (row === undefined) throw new Error('the rate-limit statement left out a key');
    const i = served.get(ask.key) ?? 0;
    served.set(ask.key, i + 1);
    const tat = Number(row.decided_tat);
    const nowMs = Number(row.decided_now_ms);
    const count = Number(row.decided_admitted);
    const admitted = i < count;
    // The time as it stood after this request: each admitted one moved it on by one interval.
    const after = admitted ? tat - (count - i - 1) * ask.intervalMs : tat;
    return { ok: true, outcome: decisionOf(admitted, after, nowMs, ask.intervalMs, ask.burst) };
  });
}
