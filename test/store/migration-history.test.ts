// The migrations of both stores on both databases are history: a database runs the ones it has not
// run yet, so a step's text never changes once released, and a database left at any older version
// upgrades to exactly the schema a new one is made with (the functions' current definitions:
// src/todo/store-postgres-schema.ts).
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { afterEach, beforeEach, describe, test } from 'node:test';
import { LEDGER_POSTGRES_MIGRATIONS } from '../../src/bank/ledger-postgres.js';
import { LEDGER_MIGRATIONS } from '../../src/bank/ledger-sqlite-schema.js';
import { openLedger } from '../../src/bank/service.js';
import type { Migration } from '../../src/db/migrations.js';
import { openTodoStore } from '../../src/todo/service.js';
import { TODO_POSTGRES_MIGRATIONS } from '../../src/todo/store-postgres-migrations.js';
import { TODO_MIGRATIONS } from '../../src/todo/store-sqlite-schema.js';
import { queryPlainSql, runPlainSql } from '../support/plain-sql.js';
import { storeBackends, type FreshDatabase } from '../support/store-backends.js';
import { suiteUnless } from '../support/suite.js';

const MIGRATIONS = {
  sqlite: { todo: TODO_MIGRATIONS, bank: LEDGER_MIGRATIONS },
  postgres: { todo: TODO_POSTGRES_MIGRATIONS, bank: LEDGER_POSTGRES_MIGRATIONS },
} as const;

/**
 * The first 16 hex digits of each step's SHA-256, as released. A new step adds its digest here; a
 * changed one is a step that databases which already ran it will never run.
 */
const RELEASED: Readonly<
  Record<'sqlite' | 'postgres', Readonly<Record<'todo' | 'bank', readonly string[]>>>
> = {
  sqlite: {
    todo: ['078ce7b643ccef39', '000499cd5361a61d', 'f8da637951fbad03', '03c1c44d58e641bf'],
    bank: ['e8e8103003f9f41b', '51389ea4067bf38b', '930c9351cc76c111'],
  },
  postgres: {
    todo: [
      'c06dbe0d6b0a25c2',
      '5eb7e6d159034ef1',
      '59dc50e46665ea1e',
      '7c936125138ec264',
      '5eb7e6d159034ef1',
      'ef508019cb49f664',
      'b54d1e6fa44c0649',
      'de99f5a0aa89e15b',
      'a6803d57a099a404',
    ],
    bank: [
      '5f289b237c55e62c',
      'f7d2f364805fb988',
      'b14648b8c80dec98',
      '53955ca98b6a42f8',
      '8426eea2296f9ac3',
      '225f92b9c66afdba',
    ],
  },
};

const digest = (step: Migration): string =>
  createHash('sha256').update(step.sql).digest('hex').slice(0, 16);

describe('released migrations', () => {
  for (const backend of ['sqlite', 'postgres'] as const) {
    for (const service of ['todo', 'bank'] as const) {
      test(`every ${service} migration on ${backend} keeps the text it was released with`, () => {
        const steps = [...MIGRATIONS[backend][service]].sort((a, b) => a.version - b.version);
        const released = RELEASED[backend][service];
        assert.deepEqual(
          steps.slice(0, released.length).map(digest),
          released,
          'a released step changed: keep its text, and add a step that makes the change',
        );
      });
    }
  }
});

/** What a database's schema is made of, each line one object and its definition, sorted. */
async function schemaOf(fresh: FreshDatabase): Promise<string[]> {
  const queries =
    fresh.db.kind === 'sqlite'
      ? ["SELECT type || ' ' || name || ': ' || COALESCE(sql, '') AS line FROM sqlite_schema"]
      : [
          `SELECT 'function ' || p.proname || ': ' || pg_get_functiondef(p.oid) AS line
             FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = current_schema()`,
          `SELECT 'column ' || table_name || '.' || column_name || ': ' || data_type || ' ' || is_nullable || ' ' || COALESCE(column_default, '') AS line
             FROM information_schema.columns WHERE table_schema = current_schema()`,
          "SELECT 'index ' || indexname || ': ' || indexdef AS line FROM pg_indexes WHERE schemaname = current_schema()",
          `SELECT 'constraint ' || c.conrelid::regclass::text || '.' || c.conname || ': ' || pg_get_constraintdef(c.oid) AS line
             FROM pg_constraint c JOIN pg_namespace n ON n.oid = c.connamespace WHERE n.nspname = current_schema()`,
          `SELECT 'trigger ' || t.tgrelid::regclass::text || '.' || t.tgname || ': ' || pg_get_triggerdef(t.oid) AS line
             FROM pg_trigger t WHERE NOT t.tgisinternal`,
          "SELECT 'sequence ' || sequence_name AS line FROM information_schema.sequences WHERE sequence_schema = current_schema()",
        ];
  const lines: string[] = [];
  for (const sql of queries)
    lines.push(...(await queryPlainSql<{ line: string }>(fresh, sql)).map((row) => row.line));
  return lines.sort();
}

/** Runs `steps` as the migration runner does, by plain SQL: a database an older build left. */
async function buildAt(
  fresh: FreshDatabase,
  service: string,
  steps: readonly Migration[],
): Promise<void> {
  await runPlainSql(fresh, [
    `CREATE TABLE IF NOT EXISTS schema_migrations (service TEXT NOT NULL, version INTEGER NOT NULL, PRIMARY KEY (service, version))${fresh.db.kind === 'sqlite' ? ' STRICT' : ''}`,
    ...steps.flatMap((step) => [
      step.sql,
      `INSERT INTO schema_migrations (service, version) VALUES ('${service}', ${step.version})`,
    ]),
  ]);
}

/** Opens the service's store on the database (which migrates it the rest of the way) and closes it. */
async function openAndClose(fresh: FreshDatabase, service: 'todo' | 'bank'): Promise<void> {
  const store =
    service === 'todo'
      ? await openTodoStore(fresh.db)
      : await openLedger(fresh.db, new Map([['alice', 70]]));
  await store.close();
}

for (const backend of await storeBackends()) {
  suiteUnless(backend.skip, `upgrading from every older version on ${backend.name}`, () => {
    const made: FreshDatabase[] = [];
    const fresh = async (): Promise<FreshDatabase> => {
      const database = await backend.fresh();
      made.push(database);
      return database;
    };
    beforeEach(() => void (made.length = 0));
    afterEach(() => Promise.all(made.map((database) => database.drop())));

    for (const service of ['todo', 'bank'] as const) {
      test(`a ${service} database left at any older version upgrades to the schema a new one is made with`, async () => {
        const steps = [...MIGRATIONS[backend.name][service]].sort((a, b) => a.version - b.version);
        const made = await fresh();
        await openAndClose(made, service);
        const expected = await schemaOf(made);
        assert.ok(
          expected.some((line) => line.includes('idempotency_keys')),
          "the schema read is the store's",
        );
        for (const [i, step] of steps.slice(0, -1).entries()) {
          const old = await fresh();
          await buildAt(old, service, steps.slice(0, i + 1));
          await openAndClose(old, service);
          assert.deepEqual(await schemaOf(old), expected, `from version ${step.version}`);
        }
      });
    }
  });
}
