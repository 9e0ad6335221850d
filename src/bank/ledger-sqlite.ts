// The ledger on SQLite: the balance check and the decrement are one conditional UPDATE, and the
// schema refuses a negative balance outright, as a last line of defence. The scaffold
// (src/db/sqlite/store.ts) runs the writes: group-committed by a worker thread on a file, so the
// event loop never waits for the disk. A keyed withdrawal, its journal row and its key record share
// the savepoint of its batch. Reads stay on this thread's own connection, which WAL lets read
// beside the writer.
import { openSqliteStore } from '../db/sqlite/store.js';
import type { StoreOptions } from '../db/store-options.js';
import { withdrawalSize, type Ledger, type Withdrawal, type WithdrawOutcome } from './ledger.js';
import {
  LEDGER_MIGRATIONS,
  LEDGER_SERVICE,
  LEDGER_WRITES,
  prepareBalanceQuery,
} from './ledger-sqlite-schema.js';

export async function openSqliteLedger(
  location: string,
  initialAccounts: ReadonlyMap<string, number>,
  options: StoreOptions = {},
): Promise<Ledger> {
  const store = await openSqliteStore<Withdrawal, WithdrawOutcome, WithdrawOutcome>({
    location,
    service: LEDGER_SERVICE,
    migrations: LEDGER_MIGRATIONS,
    seed: (seeding) => {
      const insert = seeding.prepare<[string, number]>(
        'INSERT INTO accounts (name, balance) VALUES (?, ?)',
      );
      for (const [name, balance] of initialAccounts) insert.run(name, balance);
    },
    writes: LEDGER_WRITES,
    sizeOf: withdrawalSize,
    writerScript: new URL('./ledger-sqlite-worker.js', import.meta.url),
    synchronous: options.sqliteSynchronous,
    log: options.log,
    observer: options.observer,
    keyTtlMs: options.idempotencyTtlMs,
  });
  const balanceOf = prepareBalanceQuery(store.db);
  return {
    balance: (account) => store.read(() => balanceOf(account)),
    withdraw: (account, amount, key, work) => store.write({ account, amount }, key, work),
    pruneKeys: (expiredBeforeMs) => store.pruneKeys(expiredBeforeMs),
    ping: () => store.ready(),
    close: () => store.close(),
  };
}
