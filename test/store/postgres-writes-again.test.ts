// After the PostgreSQL server refused writes, the first write of a store that goes through says at
// once that writes work again (the log line, and readiness with no probe), for each store's own
// write statement: the to-do batch and the withdrawal batch, unkeyed, outside any transaction.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { openPostgresLedger } from '../../src/bank/ledger-postgres.js';
import { createLogger } from '../../src/observe/log.js';
import { openPostgresTodoStore } from '../../src/todo/store-postgres.js';
import {
  createTestDatabase,
  postgresSkip,
  setReadOnly,
  untilRefusedAsReadOnly,
  untilTrue,
  type TestDatabase,
} from '../support/postgres.js';
import { suiteUnless } from '../support/suite.js';
import { UNBOUNDED_WORK } from '../../src/common/work.js';
import { ran } from '../support/keys.js';

const BACK = 'database takes writes again';

suiteUnless(await postgresSkip(), 'PostgreSQL stores after the server refused writes', () => {
  let database: TestDatabase;
  before(async () => {
    database = await createTestDatabase();
  });
  after(() => database.drop());

  const stores = {
    'to-do': async (log: ReturnType<typeof createLogger>) => {
      const store = await openPostgresTodoStore(database.url, { log });
      return {
        write: () => ran(store.create({ title: 'milk', done: false }, undefined, UNBOUNDED_WORK)),
        close: () => store.close(),
      };
    },
    bank: async (log: ReturnType<typeof createLogger>) => {
      const ledger = await openPostgresLedger(database.url, new Map([['alice', 1_000]]), { log });
      return {
        write: () => ran(ledger.withdraw('alice', 1, undefined, UNBOUNDED_WORK)),
        close: () => ledger.close(),
      };
    },
  };

  for (const [name, open] of Object.entries(stores)) {
    test(`the ${name} store's first write that goes through says writes work again`, async () => {
      const lines: string[] = [];
      const store = await open(
        createLogger('info', (line) => lines.push((JSON.parse(line) as { msg: string }).msg)),
      );
      try {
        await setReadOnly(database, true);
        await untilRefusedAsReadOnly(store.write);
        await setReadOnly(database, false);
        assert.ok(
          await untilTrue(() =>
            store.write().then(
              () => true,
              () => false,
            ),
          ),
          'a write went through',
        );
        assert.deepEqual(
          lines.filter((line) => line === BACK),
          [BACK],
        );
      } finally {
        await setReadOnly(database, false);
        await store.close();
      }
    });
  }
});
