// Upgrading a database whose idempotency records hold rendered answers (the first design) to
// records of outcomes (src/db/idempotency-records.ts): each record that names its outcome exactly
// replays it after the upgrade, on both databases; an insufficient-funds record, which never held
// the balance in the default format, is dropped, and its retry is refused again.
import assert from 'node:assert/strict';
import { afterEach, beforeEach, test } from 'node:test';
import { LEDGER_POSTGRES_MIGRATIONS } from '../../src/bank/ledger-postgres.js';
import { LEDGER_MIGRATIONS } from '../../src/bank/ledger-sqlite-schema.js';
import { openLedger } from '../../src/bank/service.js';
import type { Migration } from '../../src/db/migrations.js';
import { openTodoStore } from '../../src/todo/service.js';
import { TODO_POSTGRES_MIGRATIONS } from '../../src/todo/store-postgres-migrations.js';
import { TODO_MIGRATIONS } from '../../src/todo/store-sqlite-schema.js';
import { keyedWrite } from '../support/keys.js';
import { runPlainSql } from '../support/plain-sql.js';
import { storeBackends, type FreshDatabase } from '../support/store-backends.js';
import { suiteUnless } from '../support/suite.js';
import { UNBOUNDED_WORK } from '../../src/common/work.js';

/** The last version of each store before records held outcomes. */
const BEFORE = {
  sqlite: { todo: 2, bank: 2 },
  postgres: { todo: 5, bank: 4 },
} as const;

const MIGRATIONS = {
  sqlite: { todo: TODO_MIGRATIONS, bank: LEDGER_MIGRATIONS },
  postgres: { todo: TODO_POSTGRES_MIGRATIONS, bank: LEDGER_POSTGRES_MIGRATIONS },
} as const;

type Row = readonly [key: string, status: number, body: string];

/** Records as the first design wrote them: the rendered answer of each keyed write. */
const TODO_ROWS: readonly Row[] = [['created', 201, '{"id":7,"title":"seven","done":false}']];
const BANK_ROWS: readonly Row[] = [
  ['done', 200, '{"account":"alice","balance":70}'],
  ['unknown', 404, '{"detail":"Account carol not found"}'],
  ['short', 500, 'Internal Server Error'],
];

const ACCOUNTS: ReadonlyMap<string, number> = new Map([
  ['alice', 70],
  ['bob', 5],
]);

/** Runs `steps` the way the migration runner does, then writes `rows` into `table`, all by plain SQL. */
async function buildOldDatabase(
  fresh: FreshDatabase,
  service: string,
  steps: readonly Migration[],
  table: string,
  rows: readonly Row[],
): Promise<void> {
  const statements = [
    'CREATE TABLE IF NOT EXISTS schema_migrations (service TEXT NOT NULL, version INTEGER NOT NULL, PRIMARY KEY (service, version))',
    ...steps.flatMap((step) => [
      step.sql,
      `INSERT INTO schema_migrations (service, version) VALUES ('${service}', ${step.version})`,
    ]),
    service === 'bank'
      ? "INSERT INTO accounts (name, balance) VALUES ('alice', 70), ('bob', 5)"
      : 'INSERT INTO todos (id, title, done) VALUES (7, \'"seven"\', false)',
    ...rows.map(
      ([key, status, body]) =>
        `INSERT INTO ${table} (key, fingerprint, status, content_type, headers, body, recorded_at_ms) VALUES ('${key}', 'fp-${key}', ${status}, 'application/json', '{}', '${body}', 1000)`,
    ),
  ];
  const sqlite = fresh.db.kind === 'sqlite';
  await runPlainSql(
    fresh,
    sqlite
      ? statements.map((sql) =>
          sql.replace('done) VALUES (7, \'"seven"\', false)', 'done) VALUES (7, \'"seven"\', 0)'),
        )
      : statements,
  );
}

for (const backend of await storeBackends()) {
  suiteUnless(
    backend.skip,
    `upgrading recorded answers to recorded outcomes on ${backend.name}`,
    () => {
      let fresh: FreshDatabase;
      beforeEach(async () => {
        fresh = await backend.fresh();
      });
      afterEach(() => fresh.drop());

      test("a create's recorded 201 replays as the outcome naming its id", async () => {
        const steps = MIGRATIONS[backend.name].todo.filter(
          (step) => step.version <= BEFORE[backend.name].todo,
        );
        await buildOldDatabase(fresh, 'todo', steps, 'todo_idempotency_keys', TODO_ROWS);
        const store = await openTodoStore(fresh.db);
        try {
          const replay = await store.create(
            { title: 'seven', done: false },
            keyedWrite('created', 2_000),
            UNBOUNDED_WORK,
          );
          assert.deepEqual(replay, {
            kind: 'recorded',
            fingerprint: 'fp-created',
            outcome: { kind: 'created', id: 7 },
            recordedAtMs: 1_000,
          });
        } finally {
          await store.close();
        }
      });

      test("a withdrawal's recorded 200 and 404 replay as their outcomes; an insufficient-funds record is dropped and refused again", async () => {
        const steps = MIGRATIONS[backend.name].bank.filter(
          (step) => step.version <= BEFORE[backend.name].bank,
        );
        await buildOldDatabase(fresh, 'bank', steps, 'bank_idempotency_keys', BANK_ROWS);
        const ledger = await openLedger(fresh.db, ACCOUNTS);
        try {
          const replay = (key: string, account: string, amount: number) =>
            ledger.withdraw(account, amount, keyedWrite(key, 2_000), UNBOUNDED_WORK);
          assert.deepEqual(await replay('done', 'alice', 30), {
            kind: 'recorded',
            fingerprint: 'fp-done',
            outcome: { kind: 'done', balance: 70 },
            recordedAtMs: 1_000,
          });
          assert.deepEqual(await replay('unknown', 'carol', 1), {
            kind: 'recorded',
            fingerprint: 'fp-unknown',
            outcome: { kind: 'unknown-account' },
            recordedAtMs: 1_000,
          });
          assert.deepEqual(await replay('short', 'bob', 6), {
            kind: 'ran',
            outcome: { kind: 'insufficient', balance: 5 },
          });
          assert.equal(
            await ledger.balance('alice', UNBOUNDED_WORK),
            70,
            'the replay took nothing',
          );
        } finally {
          await ledger.close();
        }
      });
    },
  );
}
