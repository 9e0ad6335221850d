// The ledger's SQLite schema and its writes, shared by the in-thread ledger and the group-commit
// worker so that both take money by exactly the same statements.
import { idempotencyTableSql, type KeyedWrite, type StoredOutcome } from '../db/idempotency-records.js';
import { prepareKeyRecords } from '../db/idempotency-sqlite.js';
import type { Migration } from '../db/migrations.js';
import type { SqliteDatabase } from '../db/sqlite.js';
import type { ErrorFormat } from '../http/render.js';
import { withdrawalSize, type WithdrawOutcome } from './ledger.js';
import { withdrawalAnswer } from './withdrawal-answer.js';

export const LEDGER_KEYS_TABLE = 'bank_idempotency_keys';

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
    ${idempotencyTableSql(LEDGER_KEYS_TABLE, 'INTEGER', ' STRICT')}`,
  },
];

export const LEDGER_SERVICE = 'bank';

/** What the writer applies: a withdrawal, one under a key, or a batch of pruning. */
export type LedgerWrite =
  | { readonly kind: 'withdraw'; readonly account: string; readonly amount: number }
  /** The format travels with the write: the writer thread renders the answer it records in it. */
  | { readonly kind: 'withdraw-once'; readonly account: string; readonly amount: number; readonly key: KeyedWrite; readonly format: ErrorFormat }
  | { readonly kind: 'prune-keys'; readonly expiredBeforeMs: number };

export interface LedgerWriteOutcomes {
  readonly withdraw: WithdrawOutcome;
  readonly 'withdraw-once': StoredOutcome;
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
  const takeMoney = db.prepare<[number, string, number], { balance: number }>(
    'UPDATE accounts SET balance = balance - ? WHERE name = ? AND balance >= ? RETURNING balance',
  );
  const journal = db.prepare<[string, number, number, string | null]>(
    'INSERT INTO withdrawals (account, amount, balance_after, idempotency_key) VALUES (?, ?, ?, ?)',
  );
  const balanceOf = prepareBalanceQuery(db);
  const keys = prepareKeyRecords(db, LEDGER_KEYS_TABLE);

  const withdraw = (account: string, amount: number, key: string | null): WithdrawOutcome => {
    const taken = takeMoney.get(amount, account, amount);
    if (taken !== undefined) {
      journal.run(account, amount, taken.balance, key);
      return { kind: 'done', balance: taken.balance };
    }
    const balance = balanceOf(account);
    return balance === undefined ? { kind: 'unknown-account' } : { kind: 'insufficient', balance };
  };

  return (write) => {
    switch (write.kind) {
      case 'withdraw':
        return withdraw(write.account, write.amount, null);
      case 'withdraw-once': {
        const { account, amount, key, format } = write;
        return keys.find(key) ?? keys.record(key, withdrawalAnswer(format, account, amount, withdraw(account, amount, key.key)));
      }
      case 'prune-keys':
        return keys.prune(write.expiredBeforeMs);
    }
  };
}
