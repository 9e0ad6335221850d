// The ledger on SQLite: the balance check and the decrement are one conditional UPDATE, and the
// schema refuses a negative balance outright, as a last line of defence. The scaffold
// (src/db/sqlite-store.ts) runs the writes: group-committed by a worker thread on a file, so the
// event loop never waits for the disk. A keyed withdrawal, its journal row and its key record share
// the savepoint of its batch. Reads stay on this thread's own connection, which WAL lets read
// beside the writer.
import { openSqliteStore } from '../db/sqlite-store.js';
import type { StoreOptions } from '../db/store-options.js';
import type { Ledger } from './ledger.js';
import {
  ledgerWriteSize,
  LEDGER_MIGRATIONS,
  LEDGER_SERVICE,
  prepareBalanceQuery,
  prepareLedgerWrites,
  type LedgerWrite,
  type LedgerWriteOutcome,
  type LedgerWriteOutcomes,
} from './ledger-sqlite-schema.js';

type Write = <K extends LedgerWrite['kind']>(write: Extract<LedgerWrite, { kind: K }>) => Promise<LedgerWriteOutcomes[K]>;

export async function openSqliteLedger(location: string, initialAccounts: ReadonlyMap<string, number>, options: StoreOptions = {}): Promise<Ledger> {
  const store = await openSqliteStore<LedgerWrite, LedgerWriteOutcome>({
    location,
    service: LEDGER_SERVICE,
    migrations: LEDGER_MIGRATIONS,
    seed: (seeding) => {
      const insert = seeding.prepare<[string, number]>('INSERT INTO accounts (name, balance) VALUES (?, ?)');
      for (const [name, balance] of initialAccounts) insert.run(name, balance);
    },
    prepareWrites: prepareLedgerWrites,
    sizeOf: ledgerWriteSize,
    writerScript: new URL('./ledger-sqlite-worker.js', import.meta.url),
    synchronous: options.sqliteSynchronous,
    log: options.log,
    observer: options.observer,
    keys: { prune: (expiredBeforeMs) => ({ kind: 'prune-keys', expiredBeforeMs }), ttlMs: options.idempotencyTtlMs },
  });
  const balanceOf = prepareBalanceQuery(store.db);
  const write = ((op: LedgerWrite) => store.write(op)) as Write;
  return {
    balance: (account) => store.read(() => balanceOf(account)),
    withdraw: (account, amount) => write({ kind: 'withdraw', account, amount }),
    withdrawOnce: (account, amount, key) => write({ kind: 'withdraw-once', account, amount, key }),
    pruneKeys: (expiredBeforeMs) => store.pruneKeys(expiredBeforeMs),
    ping: () => store.ready(),
    close: () => store.close(),
  };
}
