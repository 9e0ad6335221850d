// The ledger's SQLite schema and its writes, shared by the in-thread ledger and the group-commit
// worker so that both take money by exactly the same statements.
import { outcomeRecordsSql, recordsTableSql } from '../db/idempotency-records.js';
import { prepareKeyRecords } from '../db/idempotency-sqlite.js';
import type { Migration } from '../db/migrations.js';
import type { SqliteDatabase } from '../db/sqlite.js';
import type { KeyedOutcome, KeyedWrite } from '../keyed-writes.js';
import { isoMilliseconds } from '../db/iso-time.js';
import { withdrawalSize, type WithdrawOutcome } from './ledger.js';

export const LEDGER_KEYS_TABLE = 'bank_idempotency_keys';

/**
 * A withdrawal's outcome read from the answer the first design recorded (idempotency-records.ts): a
 * 200's body names the balance left; a 404 is an unknown account. Insufficient funds is left out, so
 * its record is dropped: the default format's 500 never held the balance, and as balances only go
 * down, a retry is refused again (and recorded anew). ledger-postgres.ts says the same in its SQL.
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

/** What the writer applies: a withdrawal, one under a key, or a batch of pruning. */
export type LedgerWrite =
  | { readonly kind: 'withdraw'; readonly account: string; readonly amount: number }
  | { readonly kind: 'withdraw-once'; readonly account: string; readonly amount: number; readonly key: KeyedWrite }
  | { readonly kind: 'prune-keys'; readonly expiredBeforeMs: number };

export interface LedgerWriteOutcomes {
  readonly withdraw: WithdrawOutcome;
  readonly 'withdraw-once': KeyedOutcome<WithdrawOutcome>;
  readonly 'prune-keys': number;
}
export type LedgerWriteOutcome = LedgerWriteOutcomes[keyof LedgerWriteOutcomes];


/** A write's share of a batch's byte bound: what it carries on the wire. */
export function ledgerWriteSize(write: LedgerWrite): number {
  switch (write.kind) {
    case 'withdraw':
      return withdrawalSize(write);
    case 'withdraw-once':
      return withdrawalSize(write) + write.key.key.length + write.key.fingerprint.length + 16;
    case 'prune-keys':
      return 16;
  }
}

export type BalanceQuery = (account: string) => number | undefined;

export function prepareBalanceQuery(db: SqliteDatabase): BalanceQuery {
  // The value alone rather than a row object, which better-sqlite3 builds slowly (see prepareTodoRead).
  const select = db.prepare<[string], number>('SELECT balance FROM accounts WHERE name = ?').pluck(true);
  return (account) => select.get(account);
}

/**
 * Applies one write; it must run inside a write transaction. A withdrawal's check and decrement
 * are one conditional UPDATE; only when it takes nothing is the balance read, to tell an unknown
 * account from insufficient funds (the same transaction, so that balance is the one the UPDATE saw).
 */
export function prepareLedgerWrites(db: SqliteDatabase): (write: LedgerWrite) => LedgerWriteOutcome {
  // The balance left as a bare value: better-sqlite3 builds a row object property by property.
  const takeMoney = db
    .prepare<[number, string, number], number>('UPDATE accounts SET balance = balance - ? WHERE name = ? AND balance >= ? RETURNING balance')
    .pluck(true);
  // The time is written as the column's default would write it (strftime's '%Y-%m-%dT%H:%M:%fZ'
  // and toISOString() are the same text), but formatted once a millisecond rather than by SQLite
  // for every row.
  const journal = db.prepare<[string, number, number, string | null, string]>(
    'INSERT INTO withdrawals (account, amount, balance_after, idempotency_key, at) VALUES (?, ?, ?, ?, ?)',
  );
  const now = isoMilliseconds();
  const balanceOf = prepareBalanceQuery(db);
  const keys = prepareKeyRecords(db, LEDGER_KEYS_TABLE);

  const withdraw = (account: string, amount: number, key: string | null): WithdrawOutcome => {
    const balance = takeMoney.get(amount, account, amount);
    if (balance !== undefined) {
      journal.run(account, amount, balance, key, now());
      return { kind: 'done', balance };
    }
    const left = balanceOf(account);
    return left === undefined ? { kind: 'unknown-account' } : { kind: 'insufficient', balance: left };
  };

  return (write) => {
    switch (write.kind) {
      case 'withdraw':
        return withdraw(write.account, write.amount, null);
      case 'withdraw-once': {
        const { account, amount, key } = write;
        return keys.find<WithdrawOutcome>(key) ?? keys.record(key, withdraw(account, amount, key.key));
      }
      case 'prune-keys':
        return keys.prune(write.expiredBeforeMs);
    }
  };
}
