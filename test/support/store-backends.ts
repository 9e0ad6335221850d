// The databases a store suite runs against: the same tests, once per backend. Each `fresh()` is a
// new, empty database (a SQLite file in its own temp folder, or a new PostgreSQL database).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DbSpec } from '../../src/config.js';
import { createTestDatabase, postgresSkip } from './postgres.js';

export interface FreshDatabase {
  readonly db: DbSpec;
  drop(): Promise<void>;
}

export interface StoreBackend {
  readonly name: 'sqlite' | 'postgres';
  /** False when it can run; else the reason it is skipped. */
  readonly skip: string | false;
  fresh(): Promise<FreshDatabase>;
}

export async function freshSqlite(): Promise<FreshDatabase> {
  const folder = await mkdtemp(join(tmpdir(), 'store-test-'));
  return {
    db: { kind: 'sqlite', path: join(folder, 'store.sqlite') },
    drop: () => rm(folder, { recursive: true, force: true }),
  };
}

export async function freshPostgres(): Promise<FreshDatabase> {
  const database = await createTestDatabase();
  return { db: { kind: 'postgres', url: database.url }, drop: () => database.drop() };
}

export async function storeBackends(): Promise<readonly StoreBackend[]> {
  return [
    { name: 'sqlite', skip: false, fresh: freshSqlite },
    { name: 'postgres', skip: await postgresSkip(), fresh: freshPostgres },
  ];
}
