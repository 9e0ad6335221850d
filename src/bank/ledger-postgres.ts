// The ledger on PostgreSQL. Withdrawals are group-committed (src/db/postgres-group-commit.ts): a
// batch of them is one call of bank_withdraw_batch, which locks each account of the batch once, as
// committed, decides its withdrawals in the order asked, writes each balance once and commits them
// all together. The schema refuses a negative balance outright, as a last line of defence. Reads
// that arrive together share one query.
import { batchedReads } from '../db/postgres-batched-reads.js';
import { openPostgres } from '../db/postgres.js';
import { postgresGroupCommit } from '../db/postgres-group-commit.js';
import type { Migration } from '../db/migrations.js';
import type { StoreOptions } from '../db/store-options.js';
import { withdrawalSize, type Ledger, type Withdrawal, type WithdrawOutcome } from './ledger.js';

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
];

/** PostgreSQL text cannot hold NUL, so no account can be named with one (a path may: `%00`). */
const storable = (name: string): boolean => !name.includes('\u0000');

export async function openPostgresLedger(url: string, initialAccounts: ReadonlyMap<string, number>, options: StoreOptions = {}): Promise<Ledger> {
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
    'bank_withdraw_batch',
    'SELECT taken, balances FROM bank_withdraw_batch($1::text[], $2::bigint[])',
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

  return {
    async balance(account) {
      return storable(account) ? balances.read(account) : undefined;
    },
    async withdraw(account, amount) {
      return storable(account) ? withdrawals.write({ account, amount }) : { kind: 'unknown-account' };
    },
    ping: () => db.ping(),
    async close() {
      await Promise.all([withdrawals.close(), balances.close()]);
      await db.close();
    },
  };
}
