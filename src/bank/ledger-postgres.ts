// The ledger on PostgreSQL. Withdrawals are group-committed (src/db/postgres-group-commit.ts): a
// batch of them is one call of bank_withdraw_batch, which locks each account of the batch once, as
// committed, decides its withdrawals in the order asked, writes each balance once and commits them
// all together; the same statement appends each withdrawal made to the journal. The schema refuses a
// negative balance outright, as a last line of defence. Reads that arrive together share one query.
//
// A keyed withdrawal is one transaction of its own: the key is claimed (idempotency-postgres.ts),
// the money taken with its journal row, the answer recorded. It locks its one account row like a
// batch does, so the two queue behind each other.
import { idempotencyTableSql } from '../db/idempotency-records.js';
import { postgresKeyRecords } from '../db/idempotency-postgres.js';
import { batchedReads } from '../db/postgres-batched-reads.js';
import { openPostgres, type SqlSession } from '../db/postgres.js';
import { postgresGroupCommit } from '../db/postgres-group-commit.js';
import type { Migration } from '../db/migrations.js';
import type { StoreOptions } from '../db/store-options.js';
import type { ErrorFormat } from '../http/render.js';
import { withdrawalSize, type Ledger, type Withdrawal, type WithdrawOutcome } from './ledger.js';
import { withdrawalAnswer } from './withdrawal-answer.js';

const KEYS_TABLE = 'bank_idempotency_keys';

const MIGRATIONS: readonly Migration[] = [
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
    ${idempotencyTableSql(KEYS_TABLE, 'BIGINT', '')}`,
  },
];

/**
 * A batch and its journal rows in one statement, so one commit: the function decides and writes the
 * balances, and the rows of the withdrawals it made (taken[i] true) are appended in the order asked.
 */
const WITHDRAW_BATCH = `WITH batch AS (
    SELECT taken, balances FROM bank_withdraw_batch($1::text[], $2::bigint[])
  ), journal AS (
    INSERT INTO withdrawals (account, amount, balance_after)
    SELECT u.account, u.amount, u.balance FROM batch, unnest($1::text[], $2::bigint[], batch.balances, batch.taken) AS u(account, amount, balance, taken)
    WHERE u.taken
  )
  SELECT taken, balances FROM batch`;

/** One keyed withdrawal: the conditional decrement and its journal row, in one statement. */
const TAKE_MONEY = `WITH taken AS (
    UPDATE accounts SET balance = balance - $1 WHERE name = $2 AND balance >= $1 RETURNING balance
  ), journal AS (
    INSERT INTO withdrawals (account, amount, balance_after, idempotency_key) SELECT $2, $1, balance, $3 FROM taken
  )
  SELECT balance FROM taken`;

/** PostgreSQL text cannot hold NUL, so no account can be named with one (a path may: `%00`). */
const storable = (name: string): boolean => !name.includes('\u0000');

export async function openPostgresLedger(
  url: string,
  initialAccounts: ReadonlyMap<string, number>,
  options: StoreOptions = {},
  format: ErrorFormat = { name: 'default', catchAll: false },
): Promise<Ledger> {
  const db = await openPostgres({
    url,
    service: 'bank',
    migrations: MIGRATIONS,
    log: options.log,
    observer: options.observer,
    poolSize: options.poolSize,
    poolWaitMs: options.poolWaitMs,
    seed: async (seeding) => {
      for (const [name, balance] of initialAccounts) {
        if (!storable(name)) throw new Error('an account name holds a NUL character, which PostgreSQL cannot store');
        await seeding.query('INSERT INTO accounts (name, balance) VALUES ($1, $2)', [name, balance]);
      }
    },
  });

  const selectBalances = db.prepared<{ name: string; balance: string }>(
    'bank_balances',
    'SELECT name, balance FROM accounts WHERE name = ANY($1::text[])',
  );
  const withdrawBatch = db.prepared<{ taken: (boolean | null)[]; balances: (string | null)[] }>(
    'bank_withdraw_batch_journaled',
    WITHDRAW_BATCH,
  );

  const balances = batchedReads<string, number>(
    async (names) => {
      const { rows } = await selectBalances([names]);
      return new Map(rows.map((row) => [row.name, Number(row.balance)]));
    },
    (name) => name.length * 3,
  );

  const withdrawals = postgresGroupCommit<Withdrawal, WithdrawOutcome>({
    sizeOf: withdrawalSize,
    observer: options.observer,
    async decide(batch) {
      const { rows } = await withdrawBatch([batch.map((w) => w.account), batch.map((w) => w.amount)]);
      const answer = rows[0];
      if (answer === undefined || answer.taken.length !== batch.length) throw new Error('bank_withdraw_batch answered another number of withdrawals');
      return answer.taken.map((taken, i): WithdrawOutcome => {
        const balance = answer.balances[i];
        if (taken === null || balance === null || balance === undefined) return { kind: 'unknown-account' };
        return taken ? { kind: 'done', balance: Number(balance) } : { kind: 'insufficient', balance: Number(balance) };
      });
    },
  });

  const keys = postgresKeyRecords(KEYS_TABLE);
  async function withdrawIn(session: SqlSession, account: string, amount: number, key: string): Promise<WithdrawOutcome> {
    if (!storable(account)) return { kind: 'unknown-account' };
    const { rows } = await session.query<{ balance: string }>(TAKE_MONEY, [amount, account, key]);
    const taken = rows[0];
    if (taken !== undefined) return { kind: 'done', balance: Number(taken.balance) };
    // Refused: tell an unknown account from too little money. Balances only ever go down, so the
    // balance read now is still too small for this amount.
    const { rows: found } = await session.query<{ balance: string }>('SELECT balance FROM accounts WHERE name = $1', [account]);
    const now = found[0];
    return now === undefined ? { kind: 'unknown-account' } : { kind: 'insufficient', balance: Number(now.balance) };
  }

  return {
    async balance(account) {
      return storable(account) ? balances.read(account) : undefined;
    },
    async withdraw(account, amount) {
      return storable(account) ? withdrawals.write({ account, amount }) : { kind: 'unknown-account' };
    },
    withdrawOnce: (account, amount, key) =>
      db.transaction(async (session) => {
        const claimed = await keys.claim(session, key);
        if (claimed !== undefined) return claimed;
        const outcome = await withdrawIn(session, account, amount, key.key);
        return keys.record(session, key, withdrawalAnswer(format, account, amount, outcome));
      }),
    pruneKeys: (expiredBeforeMs) => keys.prune(db, expiredBeforeMs),
    ping: () => db.ping(),
    async close() {
      await Promise.all([withdrawals.close(), balances.close()]);
      await db.close();
    },
  };
}
