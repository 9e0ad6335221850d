// The ledger's SQLite schema and its writes, shared by the in-thread ledger and the group-commit
// worker so that both take money by exactly the same statements.
import { outcomeRecordsSql, recordsTableSql } from '../db/idempotency-records.js';
import type { Migration } from '../db/migrations.js';
import type { SqliteDatabase } from '../db/sqlite/sqlite.js';
import type { SqliteWrites, StoreBatchWrites } from '../db/sqlite/writes.js';
import { isoMilliseconds } from '../db/iso-time.js';
import type { Withdrawal, WithdrawOutcome } from './ledger.js';

export const LEDGER_KEYS_TABLE = 'bank_idempotency_keys';

/**
 * A withdrawal's outcome read from the response the first design recorded (idempotency-records.ts):
 * a 200's body names the balance left; a 404 is an unknown account. Insufficient funds is left out,
 * so its record is dropped: the default format's 500 never held the balance, and as balances only
 * go down, a retry is refused again (and recorded anew). ledger-postgres.ts says the same in its
 * SQL.
 */
const OUTCOME_FROM_ANSWER = `CASE status
    WHEN 200 THEN json_object('kind', 'done', 'balance', json_extract(body, '$.balance'))
    WHEN 404 THEN json_object('kind', 'unknown-account')
  END`;

export const LEDGER_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    sql: `CREATE TABLE accounts (
      name TEXT PRIMARY KEY,
      balance INTEGER NOT NULL CHECK (balance >= 0)
    ) STRICT`,
  },
  {
    // The journal is append-only: the triggers refuse to change or remove a row.
    version: 2,
    sql: `CREATE TABLE withdrawals (
      id INTEGER PRIMARY KEY,
      account TEXT NOT NULL REFERENCES accounts (name),
      amount INTEGER NOT NULL CHECK (amount > 0),
      balance_after INTEGER NOT NULL CHECK (balance_after >= 0),
      idempotency_key TEXT,
      at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
    ) STRICT;
    CREATE TRIGGER withdrawals_not_updated BEFORE UPDATE ON withdrawals
      BEGIN SELECT RAISE(ABORT, 'the withdrawal journal is append-only'); END;
    CREATE TRIGGER withdrawals_not_deleted BEFORE DELETE ON withdrawals
      BEGIN SELECT RAISE(ABORT, 'the withdrawal journal is append-only'); END;
    ${recordsTableSql(LEDGER_KEYS_TABLE, 'INTEGER', ' STRICT', 'answer')}`,
  },
  { version: 3, sql: outcomeRecordsSql(LEDGER_KEYS_TABLE, 'sqlite', OUTCOME_FROM_ANSWER) },
];

export const LEDGER_SERVICE = 'bank';

export type BalanceQuery = (account: string) => number | undefined;

export function prepareBalanceQuery(db: SqliteDatabase): BalanceQuery {
  // The value alone rather than a row object, which better-sqlite3 builds slowly (see
  // prepareTodoRead).
  const select = db
    .prepare<[string], number>('SELECT balance FROM accounts WHERE name = ?')
    .pluck(true);
  return (account) => select.get(account);
}

/**
 * Applies the withdrawals of a batch (batch-writes.ts); each must run inside the batch's write
 * transaction. The balance is read first, under the write lock, so the same transaction's UPDATE
 * takes from exactly that balance and the balance left is known without a RETURNING clause (for
 * which SQLite makes a temporary table on every run); an unknown account and insufficient funds
 * are told apart by that same read.
 */
function prepareLedgerWrites(db: SqliteDatabase): StoreBatchWrites<Withdrawal, WithdrawOutcome> {
  const balanceOf = prepareBalanceQuery(db);
  const takeMoney = db.prepare<[number, string]>(
    'UPDATE accounts SET balance = balance - ? WHERE name = ?',
  );
  // The time is written as the column's default would write it (strftime's '%Y-%m-%dT%H:%M:%fZ'
  // and toISOString() are the same text), but formatted once a batch, when its transaction
  // begins, rather than by SQLite for every row.
  const journal = db.prepare<[string, number, number, string | null, string]>(
    'INSERT INTO withdrawals (account, amount, balance_after, idempotency_key, at) VALUES (?, ?, ?, ?, ?)',
  );
  const now = isoMilliseconds();
  let at = '';

  return {
    begin: () => {
      at = now();
    },
    // The journal keeps a keyed withdrawal's key beside it.
    apply: ({ account, amount }, key) => {
      const balance = balanceOf(account);
      if (balance === undefined) return { kind: 'unknown-account' };
      if (balance < amount) return { kind: 'insufficient', balance };
      takeMoney.run(amount, account);
      const left = balance - amount;
      journal.run(account, amount, left, key, at);
      return { kind: 'done', balance: left };
    },
    end: () => undefined,
  };
}

/**
 * The ledger's writes, for the scaffold here and in its writer thread (ledger-sqlite-worker.ts):
 * a withdrawal answers its outcome as it is.
 */
export const LEDGER_WRITES: SqliteWrites<Withdrawal, WithdrawOutcome, WithdrawOutcome> = {
  prepare: prepareLedgerWrites,
  outcome: (_write, outcome) => outcome,
  keys: { table: LEDGER_KEYS_TABLE },
};
