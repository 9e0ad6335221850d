// The cost of a keyed write must be bounded by time, not by the keys stored: on PostgreSQL the
// lookups of the keys' table must find their rows through an index however the table grew since a
// connection first used it, and whether or not anything analyzed it (autovacuum may be off, as on
// the machines here). Each test warms one session's plans on an empty table, grows the table
// behind it without ANALYZE, and counts the scans the next call makes, in the transaction's own
// statistics (pg_stat_xact_user_tables): a sequential scan there reads every stored key.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { pruneKeyRecords } from '../../src/db/postgres/idempotency.js';
import { PRUNE_BATCH_ROWS } from '../../src/db/idempotency-records.js';
import { openPostgresLedger } from '../../src/bank/ledger-postgres.js';
import { openPostgresTodoStore } from '../../src/todo/store-postgres.js';
import { createTestDatabase, postgresSkip, type TestDatabase } from '../support/postgres.js';
import { suiteUnless } from '../support/suite.js';

const skip = await postgresSkip();
/** Enough rows that a scan of them all is hundreds of pages, where one index lookup reads three. */
const GROWN_ROWS = 50_000;
/** PL/pgSQL keeps a generic plan from the sixth call of a statement on. */
const WARM_CALLS = 8;

interface Scans {
  readonly seq: number;
  readonly idx: number;
}

/** The scans of `table` that `work` makes, counted in its own transaction (rolled back). */
async function scansOf(
  client: pg.Client,
  table: string,
  work: () => Promise<unknown>,
): Promise<Scans> {
  await client.query('BEGIN');
  try {
    await work();
    const { rows } = await client.query<{ seq: string; idx: string }>(
      'SELECT seq_scan::text AS seq, COALESCE(idx_scan, 0)::text AS idx FROM pg_stat_xact_user_tables WHERE relname = $1',
      [table],
    );
    return { seq: Number(rows[0]?.seq ?? 0), idx: Number(rows[0]?.idx ?? 0) };
  } finally {
    await client.query('ROLLBACK');
  }
}

const grow = (client: pg.Client, table: string): Promise<unknown> =>
  client.query(
    `INSERT INTO ${table} (key, fingerprint, outcome, recorded_at_ms) SELECT 'grown-' || g, 'f', '{}', 2000000000000 + g FROM generate_series(1, ${GROWN_ROWS}) g`,
  );

suiteUnless(
  skip,
  'keyed lookups on PostgreSQL, with the keys table grown and never analyzed',
  () => {
    let database: TestDatabase;
    let client: pg.Client;
    before(async () => {
      database = await createTestDatabase();
      // Each store migrates its schema into the database, then is closed: the tests run its SQL.
      await (await openPostgresLedger(database.url, new Map([['alice', 100]]))).close();
      await (await openPostgresTodoStore(database.url)).close();
      client = new pg.Client({ connectionString: database.url });
      await client.connect();
    });
    after(async () => {
      await client?.end();
      await database?.drop();
    });

    for (const [store, claim, table] of [
      ['bank', 'bank_claim_keys', 'bank_idempotency_keys'],
      ['to-do', 'todo_claim_keys', 'todo_idempotency_keys'],
    ] as const) {
      test(`the ${store} claim of keys looks each key up by its primary key once the table has grown, in a session whose plans were made on it empty`, async () => {
        const claimSql = `SELECT * FROM ${claim}($1::text[], $2::bigint[])`;
        for (let i = 0; i < WARM_CALLS; i++)
          await client.query(claimSql, [
            [`warm-${i}`, `warm-${i}-b`],
            [0, 0],
          ]);
        await grow(client, table);
        const scans = await scansOf(client, table, () =>
          client.query(claimSql, [
            ['grown-5', 'grown-77', 'absent'],
            [0, 0, 0],
          ]),
        );
        assert.equal(scans.seq, 0, 'no scan of the whole table');
        assert.ok(scans.idx >= 1, 'index lookups');
      });
    }

    test('pruning a grown table reads no row of it beyond those it deletes: none when nothing has expired, and 1,000 of them when more have', async () => {
      const session = {
        query: async <R extends object>(text: string, values?: readonly unknown[]) => {
          const result = await client.query<R & pg.QueryResultRow>(
            text,
            values === undefined ? [] : [...values],
          );
          return { rows: result.rows, rowCount: result.rowCount ?? 0 };
        },
      };
      let deleted: number | undefined;
      // The grown records are far in the future: none is expired at this bound.
      const scans = await scansOf(
        client,
        'bank_idempotency_keys',
        async () => (deleted = await pruneKeyRecords(session, 'bank_idempotency_keys', 1_000)),
      );
      assert.equal(deleted, 0);
      assert.equal(scans.seq, 0, 'no sequential scan of the keys table');
      await client.query(
        `INSERT INTO bank_idempotency_keys (key, fingerprint, outcome, recorded_at_ms) SELECT 'old-' || g, 'f', '{}', g FROM generate_series(1, 3000) g`,
      );
      const expired = await scansOf(
        client,
        'bank_idempotency_keys',
        async () => (deleted = await pruneKeyRecords(session, 'bank_idempotency_keys', 1_000_000)),
      );
      assert.equal(deleted, PRUNE_BATCH_ROWS);
      assert.equal(expired.seq, 0, 'no sequential scan of the keys table');
    });
  },
);
