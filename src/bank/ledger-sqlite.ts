// The ledger on SQLite: the balance check and the decrement are one conditional UPDATE, and the
// schema refuses a negative balance outright, as a last line of defence. The scaffold
// (src/db/sqlite-store.ts) runs the withdrawals: group-committed by a worker thread on a file, so
// the event loop never waits for the disk; reads stay on this thread's own connection, which WAL
// lets read beside the writer.
import { openSqliteStore } from '../db/sqlite-store.js';
import type { StoreOptions } from '../db/store-options.js';
import { withdrawalSize, type Ledger, type Withdrawal, type WithdrawOutcome } from './ledger.js';
import { LEDGER_MIGRATIONS, LEDGER_SERVICE, prepareBalanceQuery, prepareWithdrawal } from './ledger-sqlite-schema.js';

export async function openSqliteLedger(location: string, initialAccounts: ReadonlyMap<string, number>, options: StoreOptions = {}): Promise<Ledger> {
  const store = await openSqliteStore<Withdrawal, WithdrawOutcome>({
    location,
    service: LEDGER_SERVICE,
    migrations: LEDGER_MIGRATIONS,
    seed: (seeding) => {
      const insert = seeding.prepare<[string, number]>('INSERT INTO accounts (name, balance) VALUES (?, ?)');
      for (const [name, balance] of initialAccounts) insert.run(name, balance);
    },
    prepareWrites: prepareWithdrawal,
    sizeOf: withdrawalSize,
    writerScript: new URL('./ledger-sqlite-worker.js', import.meta.url),
    synchronous: options.sqliteSynchronous,
    log: options.log,
    observer: options.observer,
  });
  const balanceOf = prepareBalanceQuery(store.db);
  return {
    async balance(account) {
      return store.read(() => balanceOf(account));
    },
    withdraw: (account, amount) => store.write({ account, amount }),
    ping: () => store.ready(),
    close: () => store.close(),
  };
}
