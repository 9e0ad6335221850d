// The ledger's SQLite schema and its one write, shared by the in-thread ledger and the group-commit
// worker so that both take money by exactly the same statements.
import type { Migration } from '../db/migrations.js';
import type { SqliteDatabase } from '../db/sqlite.js';
import type { Withdrawal, WithdrawOutcome } from './ledger.js';

export const LEDGER_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    sql: `CREATE TABLE accounts (
      name TEXT PRIMARY KEY,
      balance INTEGER NOT NULL CHECK (balance >= 0)
    ) STRICT`,
  },
];

export const LEDGER_SERVICE = 'bank';

export type BalanceQuery = (account: string) => number | undefined;

export function prepareBalanceQuery(db: SqliteDatabase): BalanceQuery {
  const select = db.prepare<[string], { balance: number }>('SELECT balance FROM accounts WHERE name = ?');
  return (account) => select.get(account)?.balance;
}

/**
 * One withdrawal, to be run inside a write transaction: the check and the decrement are one
 * conditional UPDATE; only when it takes nothing is the balance read, to tell an unknown account
 * from insufficient funds (the same transaction, so that balance is the one the UPDATE saw).
 */
export function prepareWithdrawal(db: SqliteDatabase): (withdrawal: Withdrawal) => WithdrawOutcome {
  const takeMoney = db.prepare<[number, string, number], { balance: number }>(
    'UPDATE accounts SET balance = balance - ? WHERE name = ? AND balance >= ? RETURNING balance',
  );
  const balanceOf = prepareBalanceQuery(db);
  return ({ account, amount }) => {
    const taken = takeMoney.get(amount, account, amount);
    if (taken !== undefined) return { kind: 'done', balance: taken.balance };
    const balance = balanceOf(account);
    return balance === undefined ? { kind: 'unknown-account' } : { kind: 'insufficient', balance };
  };
}
