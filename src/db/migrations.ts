// The one migration runner, for SQLite and PostgreSQL alike. Each database keeps, per service, the
// versions it has applied in `schema_migrations`; the runner applies the missing ones in order and
// seeds a new database, all inside one transaction that holds the database's migration lock
// (BEGIN IMMEDIATE on SQLite, an advisory lock on PostgreSQL), so that instances starting together
// migrate one after another and a failed step leaves nothing behind.

export interface Migration {
  readonly version: number;
  readonly sql: string;
}

export type SqlDialect = 'sqlite' | 'postgres';
type Param = string | number;

/** What the runner needs of a connection. */
export interface MigrationSession {
  readonly dialect: SqlDialect;
  /** Runs a script of one or more statements, without parameters (a migration step). */
  exec(sql: string): void | Promise<void>;
  /** Runs one statement with parameters; the rows it returns, if any. */
  all<R extends object>(sql: string, params: readonly Param[]): R[] | Promise<R[]>;
}

export class MigrationError extends Error {
  readonly code = 'MIGRATION_FAILED';
}

export interface MigrationPlan {
  /** Migrations are counted per service, so that both services may share one database. */
  readonly service: string;
  readonly migrations: readonly Migration[];
  /** Runs once, after the first migrations, so data is seeded only into a new database. */
  readonly seed: () => void | Promise<void>;
}

/** A database to migrate: a session for a plain read, and a way to run work under the migration lock. */
export interface MigrationTarget {
  readonly session: MigrationSession;
  /** Runs `work` in one transaction holding the database's migration lock; a failure undoes it all. */
  locked(work: (session: MigrationSession) => Promise<void>): Promise<void>;
}

export async function runMigrations(target: MigrationTarget, plan: MigrationPlan): Promise<void> {
  const steps = ordered(plan.migrations);
  const newest = steps.at(-1)?.version ?? 0;
  // A plain read first: a database already up to date opens without a write lock, so that a
  // read-only one still serves reads (its writes then fail as read-only, and readiness says so).
  const before = await appliedVersion(target.session, plan.service, true);
  checkNotNewer(before, newest, plan.service);
  if (before === newest && newest > 0) return;
  await target.locked(async (session) => {
    await session.exec(
      `CREATE TABLE IF NOT EXISTS schema_migrations (service TEXT NOT NULL, version INTEGER NOT NULL, PRIMARY KEY (service, version))${session.dialect === 'sqlite' ? ' STRICT' : ''}`,
    );
    const current = await appliedVersion(session, plan.service, false);
    checkNotNewer(current, newest, plan.service);
    for (const step of steps) {
      if (step.version <= current) continue;
      await session.exec(step.sql);
      await session.all(
        `INSERT INTO schema_migrations (service, version) VALUES (${placeholder(session, 1)}, ${placeholder(session, 2)})`,
        [plan.service, step.version],
      );
    }
    if (current === 0) await plan.seed();
  });
}

const placeholder = (session: MigrationSession, n: number): string =>
  session.dialect === 'postgres' ? `$${n}` : '?';

async function appliedVersion(
  session: MigrationSession,
  service: string,
  mayBeMissing: boolean,
): Promise<number> {
  if (mayBeMissing) {
    const exists =
      session.dialect === 'postgres'
        ? "SELECT 1 AS one WHERE to_regclass('schema_migrations') IS NOT NULL"
        : "SELECT 1 AS one FROM sqlite_schema WHERE type = 'table' AND name = 'schema_migrations'";
    if ((await session.all(exists, [])).length === 0) return 0;
  }
  const rows = await session.all<{ version: number | null }>(
    `SELECT MAX(version) AS version FROM schema_migrations WHERE service = ${placeholder(session, 1)}`,
    [service],
  );
  return rows[0]?.version ?? 0;
}

/** A database migrated by a newer build may hold what this build cannot read or keep intact. */
function checkNotNewer(current: number, newest: number, service: string): void {
  if (current > newest) {
    throw new MigrationError(
      `the ${service} schema is at version ${current}, newer than this build knows (${newest}): run a newer build`,
    );
  }
}

function ordered(migrations: readonly Migration[]): Migration[] {
  const steps = [...migrations].sort((a, b) => a.version - b.version);
  steps.forEach((step, i) => {
    if (
      !Number.isInteger(step.version) ||
      step.version < 1 ||
      (i > 0 && steps[i - 1]?.version === step.version)
    ) {
      throw new MigrationError(
        `migration versions must be distinct positive integers (found ${step.version})`,
      );
    }
  });
  return steps;
}

/**
 * Statements, the same in both dialects, that write to the database and leave it as it was (in the
 * caller's transaction): the way to learn whether writes work again (disk space back, read-only
 * lifted) without a request having to fail first.
 */
export const WRITE_PROBE_STATEMENTS: readonly string[] = [
  "INSERT INTO schema_migrations (service, version) VALUES ('~write-probe', 0) ON CONFLICT DO NOTHING",
  "DELETE FROM schema_migrations WHERE service = '~write-probe'",
];
