// The ledger on SQLite: the balance check and the decrement are one conditional UPDATE, and the
// schema refuses a negative balance outright, as a last line of defence. On a file, withdrawals are
// group-committed (src/db/group-commit.ts): many per transaction and fsync, written by a worker
// thread, so the event loop never waits for the disk. Reads stay on this thread's own connection,
// which WAL lets read beside the writer.
import { GroupCommitWriter } from '../db/group-commit.js';
import type { StoreObserver } from '../db/store-observer.js';
import { openSqlite, sqliteAnswers } from '../db/sqlite.js';
import { turnScopedReads } from '../db/sqlite-turn-reads.js';
import { withdrawalSize, type Ledger, type Withdrawal, type WithdrawOutcome } from './ledger.js';
import { LEDGER_MIGRATIONS, LEDGER_SERVICE, prepareBalanceQuery, prepareWithdrawStep } from './ledger-sqlite-schema.js';

export function openSqliteLedger(
  location: string,
  initialAccounts: ReadonlyMap<string, number>,
  synchronous: 'FULL' | 'OFF' = 'FULL',
  observer?: StoreObserver,
): Ledger {
  const db = openSqlite({
    location,
    service: LEDGER_SERVICE,
    migrations: LEDGER_MIGRATIONS,
    synchronous,
    seed: (seeding) => {
      const insert = seeding.prepare<[string, number]>('INSERT INTO accounts (name, balance) VALUES (?, ?)');
      for (const [name, balance] of initialAccounts) insert.run(name, balance);
    },
  });
  const balanceOf = prepareBalanceQuery(db);

  // A worker cannot open this thread's :memory: database, and there is no disk to wait for anyway.
  if (location === ':memory:') {
    const withdraw = db.transaction(prepareWithdrawStep(db));
    return {
      async balance(account) {
        return balanceOf(account);
      },
      async withdraw(account, amount) {
        return withdraw.immediate(account, amount);
      },
      async ping() {
        return sqliteAnswers(db, location);
      },
      async close() {
        db.close();
      },
    };
  }

  const reads = turnScopedReads(db);
  const writer = new GroupCommitWriter<Withdrawal, WithdrawOutcome>(
    new URL('./ledger-sqlite-worker.js', import.meta.url),
    { location, synchronous },
    { sizeOf: withdrawalSize, onCommitted: reads.end, observer },
  );
  return {
    async balance(account) {
      return reads.read(() => balanceOf(account));
    },
    withdraw: (account, amount) => writer.write({ account, amount }),
    async ping() {
      return writer.healthy && sqliteAnswers(db, location);
    },
    async close() {
      try {
        await writer.close();
      } finally {
        reads.end();
        db.close();
      }
    },
  };
}
