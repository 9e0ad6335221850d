// After the PostgreSQL server refused writes, the first write of a store that goes through says at
// once that writes work again (the log line, and readiness with no probe), for each store's own
// write statement: the to-do batch and the withdrawal batch, unkeyed, outside any transaction.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { openPostgresLedger } from '../../src/bank/ledger-postgres.js';
import { createLogger } from '../../src/log.js';
import { openPostgresTodoStore } from '../../src/todo/store-postgres.js';
import { createTestDatabase, postgresSkip, setReadOnly, type TestDatabase } from '../support/postgres.js';
import { suiteUnless } from '../support/suite.js';

const BACK = 'database takes writes again';

/** Tries `write` until the server's refusal reaches it: the pool's ended sessions fail first as outages. */
async function refusedOnce(write: () => Promise<unknown>): Promise<void> {
  for (let tries = 0; tries < 50; tries++) {
    const error = await write().then(() => undefined, (failure: unknown) => failure);
    if (error instanceof Error && error.constructor.name === 'StoreReadOnlyError') return;
  }
  assert.fail('no write was refused as read-only');
}

/** Writes until one goes through (the first ones may meet the sessions just ended). */
async function succeeds(write: () => Promise<unknown>): Promise<unknown> {
  for (let tries = 0; tries < 49; tries++) {
    const result = await write().then((value) => ({ value }), () => undefined);
    if (result !== undefined) return result.value;
  }
  return write();
}

suiteUnless(await postgresSkip(), 'PostgreSQL stores after the server refused writes', () => {
  let database: TestDatabase;
  before(async () => {
    database = await createTestDatabase();
  });
  after(() => database.drop());

  const stores = {
    'to-do': async (log: ReturnType<typeof createLogger>) => {
      const store = await openPostgresTodoStore(database.url, { log });
      return { write: () => store.create({ title: 'milk', done: false }), close: () => store.close() };
    },
    bank: async (log: ReturnType<typeof createLogger>) => {
      const ledger = await openPostgresLedger(database.url, new Map([['alice', 1_000]]), { log });
      return { write: () => ledger.withdraw('alice', 1), close: () => ledger.close() };
    },
  };

  for (const [name, open] of Object.entries(stores)) {
    test(`the ${name} store's first write that goes through says writes work again`, async () => {
      const lines: string[] = [];
      const store = await open(createLogger('info', (line) => lines.push((JSON.parse(line) as { msg: string }).msg)));
      try {
        await setReadOnly(database, true);
        await refusedOnce(store.write);
        await setReadOnly(database, false);
        await succeeds(store.write);
        assert.deepEqual(lines.filter((line) => line === BACK), [BACK]);
      } finally {
        await setReadOnly(database, false);
        await store.close();
      }
    });
  }
});
