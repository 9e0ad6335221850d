// The banking service assembled: its ledger on the configured database, its routes, its title.
import type { DbSpec } from '../config.js';
import type { StoreOptions } from '../db/store-options.js';
import type { ErrorFormat } from '../http/render.js';
import type { ServiceDefinition } from '../http/service.js';
import type { Ledger } from './ledger.js';
import { openSqliteLedger } from './ledger-sqlite.js';
import { openPostgresLedger } from './ledger-postgres.js';
import { ACCOUNT_SCHEMA } from './model.js';
import { bankRoutes } from './routes.js';

export async function openLedger(
  db: DbSpec,
  accounts: ReadonlyMap<string, number>,
  options: StoreOptions = {},
): Promise<Ledger> {
  switch (db.kind) {
    case 'memory':
      return openSqliteLedger(':memory:', accounts, options);
    case 'sqlite':
      return openSqliteLedger(db.path, accounts, options);
    case 'postgres':
      return openPostgresLedger(db.url, accounts, options);
  }
}

function titleFor(format: ErrorFormat): string {
  switch (format.name) {
    case 'default':
      return 'Banking service (default)';
    case 'problem':
      return 'Banking service (problem details)';
    case 'unified':
      return format.catchAll
        ? 'Banking service (unified + catch-all)'
        : 'Banking service (unified)';
  }
}

export async function createBankService(
  db: DbSpec,
  accounts: ReadonlyMap<string, number>,
  format: ErrorFormat,
  options: StoreOptions = {},
): Promise<ServiceDefinition> {
  const ledger = await openLedger(db, accounts, options);
  return {
    title: titleFor(format),
    version: '0.1.0',
    routes: bankRoutes(ledger),
    components: { Account: ACCOUNT_SCHEMA },
    ready: () => ledger.ping(),
    close: () => ledger.close(),
  };
}
