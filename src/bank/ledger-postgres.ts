// The ledger on PostgreSQL: the balance check and the decrement are one conditional UPDATE (the
// row lock it takes queues concurrent withdrawals from any instance, and each re-checks the
// balance it finds), and the schema refuses a negative balance outright, as a last line of defence.
import { openPostgres } from '../db/postgres.js';
import type { Migration } from '../db/sqlite.js';
import type { Logger } from '../log.js';
import type { Ledger, WithdrawOutcome } from './ledger.js';

const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    sql: `CREATE TABLE accounts (
      name TEXT PRIMARY KEY,
      balance BIGINT NOT NULL CHECK (balance >= 0)
    )`,
  },
];

/** PostgreSQL text cannot hold NUL, so no account can be named with one (a path may: `%00`). */
const storable = (name: string): boolean => !name.includes('\u0000');

export async function openPostgresLedger(url: string, initialAccounts: ReadonlyMap<string, number>, log?: Logger): Promise<Ledger> {
  const db = await openPostgres({
    url,
    service: 'bank',
    migrations: MIGRATIONS,
    log,
    seed: async (seeding) => {
      for (const [name, balance] of initialAccounts) {
        if (!storable(name)) throw new Error('an account name holds a NUL character, which PostgreSQL cannot store');
        await seeding.query('INSERT INTO accounts (name, balance) VALUES ($1, $2)', [name, balance]);
      }
    },
  });

  async function balance(account: string): Promise<number | undefined> {
    if (!storable(account)) return undefined;
    const { rows } = await db.query<{ balance: string }>('SELECT balance FROM accounts WHERE name = $1', [account]);
    const row = rows[0];
    return row === undefined ? undefined : Number(row.balance);
  }

  return {
    balance,
    async withdraw(account, amount): Promise<WithdrawOutcome> {
      if (!storable(account)) return { kind: 'unknown-account' };
      const { rows } = await db.query<{ balance: string }>(
        'UPDATE accounts SET balance = balance - $1 WHERE name = $2 AND balance >= $1 RETURNING balance',
        [amount, account],
      );
      const taken = rows[0];
      if (taken !== undefined) return { kind: 'done', balance: Number(taken.balance) };
      // Refused: tell an unknown account from too little money. Balances only ever go down, so
      // the balance read now is still too small for this amount.
      const now = await balance(account);
      return now === undefined ? { kind: 'unknown-account' } : { kind: 'insufficient', balance: now };
    },
    ping: () => db.ping(),
    close: () => db.close(),
  };
}
