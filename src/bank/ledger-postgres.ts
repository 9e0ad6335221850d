// The ledger on PostgreSQL, on the scaffold of src/db/postgres/store.ts. Withdrawals are
// group-committed: a batch of them is one call of bank_withdraw_batch, which locks each account of
// the batch once, as committed, decides its withdrawals in the order asked, writes each balance
// once and commits them all together; the same statement appends each withdrawal made to the
// journal. The schema refuses a negative balance outright, as a last line of defence. Reads that
// arrive together share one query.
//
// Keyed withdrawals share the batch: a batch that holds any is one transaction that claims their
// keys, decides every withdrawal that may run with the same function, and records the keyed ones'
// outcomes before its one commit.
import { outcomeRecordsSql, recordsTableSql } from '../db/idempotency-records.js';
import { claimKeysFunctionSql, plannedAtEachCallSql } from '../db/postgres/idempotency.js';
import type { Migration } from '../db/migrations.js';
import { openPostgresStore } from '../db/postgres/store.js';
import type { StoreOptions } from '../db/store-options.js';
import { withdrawalSize, type Ledger, type Withdrawal, type WithdrawOutcome } from './ledger.js';

const KEYS_TABLE = 'bank_idempotency_keys';
const CLAIM_KEYS = 'bank_claim_keys';

/** A withdrawal's outcome read from the response the first design recorded, as on SQLite (ledger-sqlite-schema.ts). */
const OUTCOME_FROM_ANSWER = `CASE status
    WHEN 200 THEN json_build_object('kind', 'done', 'balance', (body::json ->> 'balance')::bigint)::text
    WHEN 404 THEN json_build_object('kind', 'unknown-account')::text
  END`;

export const LEDGER_POSTGRES_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    sql: `CREATE TABLE accounts (
      name TEXT PRIMARY KEY,
      balance BIGINT NOT NULL CHECK (balance >= 0)
    )`,
  },
  {
    version: 2,
    // taken[i]: true when withdrawal i was made, false when refused for want of money, NULL for an
    // unknown account; balances[i]: the account's balance after it (NULL for an unknown account).
    sql: `CREATE FUNCTION bank_withdraw_batch(names TEXT[], amounts BIGINT[], OUT taken BOOLEAN[], OUT balances BIGINT[])
    LANGUAGE plpgsql AS $$
    DECLARE
      held TEXT[];       -- the batch's accounts that exist, in name order
      current BIGINT[];  -- their balances as the batch goes on
      slot INT[];        -- for each withdrawal, its account's place in held (NULL: unknown account)
      s INT;
    BEGIN
      -- Each account once, in name order: batches of other instances lock in the same order, so
      -- they queue behind this one instead of deadlocking, and FOR UPDATE reads the row as committed.
      SELECT COALESCE(array_agg(locked.name ORDER BY locked.name), '{}'), COALESCE(array_agg(locked.balance ORDER BY locked.name), '{}')
        INTO held, current
        FROM (SELECT a.name, a.balance FROM accounts a WHERE a.name = ANY(names) ORDER BY a.name FOR UPDATE) AS locked;
      SELECT array_agg(array_position(held, u.name) ORDER BY u.i) INTO slot
        FROM unnest(names) WITH ORDINALITY AS u(name, i);
      taken := '{}';
      balances := '{}';
      FOR i IN 1 .. COALESCE(cardinality(names), 0) LOOP
        s := slot[i];
        IF s IS NULL THEN
          taken[i] := NULL;
          balances[i] := NULL;
        ELSIF current[s] >= amounts[i] THEN
          current[s] := current[s] - amounts[i];
          taken[i] := true;
          balances[i] := current[s];
        ELSE
          taken[i] := false;
          balances[i] := current[s];
        END IF;
      END LOOP;
      UPDATE accounts a SET balance = b.balance
        FROM unnest(held, current) AS b(name, balance)
        WHERE a.name = b.name AND a.balance <> b.balance;
    END
    $$`,
  },
  {
    // The journal is append-only: the triggers refuse to change, remove or truncate a row.
    version: 3,
    sql: `CREATE TABLE withdrawals (
      id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      account TEXT NOT NULL REFERENCES accounts (name),
      amount BIGINT NOT NULL CHECK (amount > 0),
      balance_after BIGINT NOT NULL CHECK (balance_after >= 0),
      idempotency_key TEXT,
      at TIMESTAMPTZ NOT NULL DEFAULT now()
    );
    CREATE FUNCTION withdrawals_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION 'the withdrawal journal is append-only'; END $$;
    CREATE TRIGGER withdrawals_not_changed BEFORE UPDATE OR DELETE ON withdrawals
      FOR EACH ROW EXECUTE FUNCTION withdrawals_append_only();
    CREATE TRIGGER withdrawals_not_truncated BEFORE TRUNCATE ON withdrawals
      FOR EACH STATEMENT EXECUTE FUNCTION withdrawals_append_only();
    ${recordsTableSql(KEYS_TABLE, 'BIGINT', '', 'answer')}`,
  },
  { version: 4, sql: claimKeysFunctionSql(CLAIM_KEYS, KEYS_TABLE, 'answer') },
  {
    version: 5,
    sql: `${outcomeRecordsSql(KEYS_TABLE, 'postgres', OUTCOME_FROM_ANSWER)};
      ${claimKeysFunctionSql(CLAIM_KEYS, KEYS_TABLE)}`,
  },
  // The claim planned at each call, for the table as it is (plannedAtEachCallSql).
  { version: 6, sql: plannedAtEachCallSql(CLAIM_KEYS) },
];

/**
 * A batch and its journal rows in one statement, so one commit: the function decides and writes the
 * balances, and the rows of the withdrawals it made (taken[i] true) are appended in the order
 * asked, each with its idempotency key or NULL.
 */
const WITHDRAW_BATCH = `WITH batch AS (
    SELECT taken, balances FROM bank_withdraw_batch($1::text[], $2::bigint[])
  ), journal AS (
    INSERT INTO withdrawals (account, amount, balance_after, idempotency_key)
    SELECT u.account, u.amount, u.balance, u.key
    FROM batch, unnest($1::text[], $2::bigint[], batch.balances, batch.taken, $3::text[]) AS u(account, amount, balance, taken, key)
    WHERE u.taken
  )
  SELECT taken, balances FROM batch`;

/** PostgreSQL text cannot hold NUL, so no account can be named with one (a path may: `%00`). */
const storable = (name: string): boolean => !name.includes('\u0000');

export async function openPostgresLedger(
  url: string,
  initialAccounts: ReadonlyMap<string, number>,
  options: StoreOptions = {},
): Promise<Ledger> {
  const store = await openPostgresStore<Withdrawal, WithdrawOutcome, WithdrawOutcome>({
    url,
    service: 'bank',
    migrations: LEDGER_POSTGRES_MIGRATIONS,
    seed: async (seeding) => {
      for (const [name, balance] of initialAccounts) {
        if (!storable(name))
          throw new Error('an account name holds a NUL character, which PostgreSQL cannot store');
        await seeding.query('INSERT INTO accounts (name, balance) VALUES ($1, $2)', [
          name,
          balance,
        ]);
      }
    },
    async decide(session, batch, keys) {
      const { rows } = await session.query<{
        taken: (boolean | null)[];
        balances: (string | null)[];
      }>(
        WITHDRAW_BATCH,
        [batch.map((w) => w.account), batch.map((w) => w.amount), keys],
        'bank_withdraw_batch_journaled',
      );
      const row = rows[0];
      if (row === undefined || row.taken.length !== batch.length)
        throw new Error('bank_withdraw_batch answered another number of withdrawals');
      return row.taken.map((taken, i): WithdrawOutcome => {
        const balance = row.balances[i];
        if (taken === null || balance === null || balance === undefined)
          return { kind: 'unknown-account' };
        return taken
          ? { kind: 'done', balance: Number(balance) }
          : { kind: 'insufficient', balance: Number(balance) };
      });
    },
    outcome: (_withdrawal, outcome) => outcome,
    sizeOf: withdrawalSize,
    keysTable: KEYS_TABLE,
    claimFunction: CLAIM_KEYS,
    options,
  });

  const balances = store.reads<string, { name: string; balance: string }, number>({
    name: 'bank_balances',
    sql: 'SELECT name, balance FROM accounts WHERE name = ANY($1::text[])',
    table: 'accounts',
    columns: ['name', 'balance'],
    keyOf: (row) => row.name,
    valueOf: (row) => Number(row.balance),
    sizeOf: (name) => name.length * 3,
  });

  return {
    async balance(account, work) {
      return storable(account) ? balances.read(account, work) : undefined;
    },
    // An account PostgreSQL cannot name is unknown, as the empty name is (no account has it), and
    // under a key that outcome is recorded as any other.
    withdraw: (account, amount, key, work) =>
      store.write(storable(account) ? { account, amount } : { account: '', amount }, key, work),
    pruneKeys: (expiredBeforeMs) => store.pruneKeys(expiredBeforeMs),
    ping: () => store.ready(),
    close: () => store.close(),
  };
}
