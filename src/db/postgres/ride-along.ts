// Work that rides in another statement's round trip. A rider (the shared rate limiter's decisions,
// rate-limits-postgres.ts) is a data-modifying statement with RETURNING; a carrier (a store's
// batched reads, postgres-store.ts) puts it before its own query as a WITH and returns both's rows
// in one result: one round trip, one transaction and one wake-up of a PostgreSQL backend where
// there were two. Under load a statement's own cost, on both sides of the socket, is as much as the
// rider's work inside it (docs/performance.md, "Decisions carried by the reads").
//
// Each party keeps its own failure: when the combined statement fails for anything but an outage
// (a read's deadline cancelled it, the database refuses writes while it still serves reads), the
// carrier runs its query alone and the rider decides alone, so that neither is refused for the
// other's sake. A statement is all or nothing, so a failed one applied none of the rider's work.
import type { Work } from '../../common/work.js';
import { isOutage } from './errors.js';
import type { SqlResult, SqlValue } from './postgres.js';

/** A row of the rider's RETURNING, by column name. */
export type RiderRow = Readonly<Record<string, unknown>>;

/** The rider's work queued when a carrier left, taken along by it. */
export interface Boarding {
  /** The rider statement's parameters, after the carrier's. */
  readonly values: readonly SqlValue[];
  /** The combined statement returned: these rows are the rider's. */
  landed(rows: readonly RiderRow[]): void;
  /** The combined statement failed: the rider's work was not done. */
  failed(error: Error): void;
}

export interface Rider {
  /** Part of the name of each carrier's combined statement, prepared once per connection. */
  readonly name: string;
  /** The rider's statement, its parameters numbered from `$first`, returning `columns`. */
  statement(first: number): string;
  /** Its RETURNING's column names, distinct from any carrier's; the first is never NULL. */
  readonly columns: readonly string[];
  /** Takes what the rider has queued, if anything, for a carrier leaving now. */
  board(): Boarding | undefined;
  /**
   * A carrier says how to tell that it has work queued, and so will leave soon: while one has,
   * the rider's work waits for it (for a bounded time) rather than leaving alone.
   */
  waitFor(queued: () => boolean): void;
}

/** A carrier's query: its columns by name, and how many parameters it numbers from $1. */
export interface CarrierQuery {
  readonly sql: string;
  readonly columns: readonly string[];
  readonly parameters: number;
}

/**
 * The carrier's query with the rider's statement before it: the carrier's rows, then the rider's,
 * each with the other's columns NULL (UNION ALL resolves those NULLs to the other branch's types).
 */
export function carryingSql(carrier: CarrierQuery, rider: Rider): string {
  const nulls = (columns: readonly string[], named: boolean): string =>
    columns.map((column) => (named ? `NULL AS ${column}` : 'NULL')).join(', ');
  return `WITH rider AS (${rider.statement(carrier.parameters + 1)})
SELECT ${carrier.columns.join(', ')}, ${nulls(rider.columns, true)} FROM (${carrier.sql}) AS carrier
UNION ALL
SELECT ${nulls(carrier.columns, false)}, ${rider.columns.join(', ')} FROM rider`;
}

type Run<Row> = (values: readonly SqlValue[], work: Work) => Promise<SqlResult<Row>>;

/**
 * The carrier's rows for `values`: through `combined` with whatever the rider has queued, or
 * through `alone` when it has nothing (or the combined statement failed but for an outage). Both
 * are bounded by the carrier's `work`, its reads' deadline.
 */
export async function carry<Row extends object>(
  rider: Rider,
  values: readonly SqlValue[],
  alone: Run<Row>,
  combined: Run<Row>,
  work: Work,
): Promise<readonly Row[]> {
  const boarding = rider.board();
  if (boarding === undefined) return (await alone(values, work)).rows;
  let rows: readonly Row[];
  try {
    rows = (await combined([...values, ...boarding.values], work)).rows;
  } catch (error) {
    const failure = error instanceof Error ? error : new Error(String(error));
    boarding.failed(failure);
    if (isOutage(failure)) throw failure;
    return (await alone(values, work)).rows;
  }
  const marker = rider.columns[0] as string;
  const own: Row[] = [];
  const riders: RiderRow[] = [];
  for (const row of rows) {
    const fields = row as RiderRow;
    if (fields[marker] === null) own.push(row);
    else riders.push(fields);
  }
  boarding.landed(riders);
  return own;
}
