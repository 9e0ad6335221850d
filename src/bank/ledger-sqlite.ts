// The ledger on SQLite: the balance check and the decrement are one conditional UPDATE, and the
// schema refuses a negative balance outright, as a last line of defence.
import { openSqlite, type Migration } from '../db/sqlite.js';
import type { Ledger, WithdrawOutcome } from './ledger.js';

const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    sql: `CREATE TABLE accounts (
      name TEXT PRIMARY KEY,
      balance INTEGER NOT NULL CHECK (balance >= 0)
    ) STRICT`,
  },
];

export function openSqliteLedger(
  location: string,
  initialAccounts: ReadonlyMap<string, number>,
  synchronous?: 'FULL' | 'OFF',
): Ledger {
  const db = openSqlite({
    location,
    service: 'bank',
    migrations: MIGRATIONS,
    synchronous,
    seed: (seeding) => {
      const insert = seeding.prepare<[string, number]>('INSERT INTO accounts (name, balance) VALUES (?, ?)');
      for (const [name, balance] of initialAccounts) insert.run(name, balance);
    },
  });
  const selectBalance = db.prepare<[string], { balance: number }>('SELECT balance FROM accounts WHERE name = ?');
  const takeMoney = db.prepare<[number, string, number], { balance: number }>(
    'UPDATE accounts SET balance = balance - ? WHERE name = ? AND balance >= ? RETURNING balance',
  );
  const withdraw = db.transaction((account: string, amount: number): WithdrawOutcome => {
    const taken = takeMoney.get(amount, account, amount);
    if (taken !== undefined) return { kind: 'done', balance: taken.balance };
    const row = selectBalance.get(account);
    return row === undefined ? { kind: 'unknown-account' } : { kind: 'insufficient', balance: row.balance };
  });

  return {
    async balance(account) {
      return selectBalance.get(account)?.balance;
    },
    async withdraw(account, amount) {
      return withdraw.immediate(account, amount);
    },
    async ping() {
      return db.open;
    },
    async close() {
      db.close();
    },
  };
}
