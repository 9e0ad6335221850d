// Configuration is read once, from the command line and then the environment, into one typed
// object: the core's options here, each feature's in its own module (src/features/), read through
// the one list of features. Anything wrong stops the process with one line saying what, and exit
// code 2.
import type { LogLevel } from './observe/log.js';
import { ERROR_FORMAT_NAMES, type ErrorFormatName } from './http/render.js';
import { POOLERS, type Pooler } from './db/postgres/pooler.js';
import { configureFeature, type FeatureOn } from './features/feature.js';
import { FEATURES } from './features/features.js';
import {
  ConfigError,
  onOff,
  parseBounded,
  readOptions,
  usageOf,
  type OptionSpec,
  type OptionValues,
  type SettingWarning,
} from './options.js';

export { ConfigError } from './options.js';

export type ServiceName = 'todo' | 'bank';

export type DbSpec =
  | { readonly kind: 'memory' }
  | { readonly kind: 'sqlite'; readonly path: string }
  | { readonly kind: 'postgres'; readonly url: string };

export interface Config {
  readonly services: readonly ServiceName[];
  readonly host: string;
  /** The first service listens here, the next one on port + 1. */
  readonly port: number;
  /** Undefined: each service in its own SQLite file under ./data/. */
  readonly db: DbSpec | undefined;
  readonly errors: ErrorFormatName;
  readonly catchAll: boolean;
  readonly accounts: ReadonlyMap<string, number> | undefined;
  readonly logLevel: LogLevel;
  /** One info line per request; off leaves every other line as it is. */
  readonly accessLog: boolean;
  /** GET /metrics in the Prometheus text format. */
  readonly metrics: boolean;
  /** Serve /metrics here instead of on the API port (the bank at port + 1 with "all"); undefined: on the API port. */
  readonly metricsListen: { readonly host: string | undefined; readonly port: number } | undefined;
  /** SQLite only. OFF gives up durability; it exists so that benchmarks can measure what FULL costs. */
  readonly sqliteSynchronous: 'FULL' | 'OFF';
  /** PostgreSQL: connections each service keeps at most; undefined for the store's default. */
  readonly dbPoolSize: number | undefined;
  /** PostgreSQL: how long a request may wait for a pooled connection; undefined for the default. */
  readonly dbPoolWaitMs: number | undefined;
  /** PostgreSQL: transaction behind a pooler in transaction mode (PgBouncer), which keeps no session; undefined: none. */
  readonly dbPooler: Pooler | undefined;
  /** A PUT or DELETE of an existing to-do without If-Match answers 428 (docs/conditional-requests.md). */
  readonly requireIfMatch: boolean;
  /** Connections one client address may hold at once (--connections-per-client); 0: no bound of its own; undefined: the default. */
  readonly connectionsPerClient: number | undefined;
  /** The features that are on, with their settings, in the list's order (src/features/features.ts). */
  readonly features: readonly FeatureOn[];
  /** Settings ignored (a bad OTEL_* value): each is logged once at start, and the service runs on. */
  readonly warnings: readonly SettingWarning[];
  readonly help: boolean;
}

export const DEFAULT_PORTS: Readonly<Record<ServiceName, number>> = { todo: 8000, bank: 8001 };

/** The core's options: where the services listen, their data, their errors, their logs and metrics. */
const CORE_OPTIONS: readonly OptionSpec[] = [
  option(
    'host',
    'value',
    `--host H             address to listen on (SVC_HOST, default 127.0.0.1)`,
  ),
  option(
    'port',
    'value',
    `--port N             port of the first service; with "all" the bank takes N+1 (SVC_PORT)`,
  ),
  option(
    'db',
    'value',
    `--db SPEC            memory | sqlite:PATH | postgres://user@host:port/db (SVC_DB,
                       default: sqlite:./data/todo.sqlite and sqlite:./data/bank.sqlite)`,
  ),
  option(
    'errors',
    'value',
    `--errors FORMAT      default | unified | problem: the error body format; problem is RFC 9457
                       application/problem+json (SVC_ERRORS, default default)`,
  ),
  option(
    'catch-all',
    'switch',
    `--catch-all          unified format: unhandled failures as a JSON 500 (SVC_CATCH_ALL=1)`,
  ),
  option(
    'accounts',
    'value',
    `--accounts LIST      initial bank accounts, name=balance,... (SVC_ACCOUNTS, default alice=100,bob=5)`,
  ),
  option(
    'log-level',
    'value',
    `--log-level LEVEL    info | warn | error | silent (SVC_LOG_LEVEL, default info)`,
  ),
  option(
    'access-log',
    'value',
    `--access-log on|off  one info line per request (SVC_ACCESS_LOG, default on)`,
  ),
  option(
    'metrics',
    'value',
    `--metrics on|off     GET /metrics for Prometheus (SVC_METRICS, default on)`,
  ),
  option(
    'metrics-listen',
    'value',
    `--metrics-listen [HOST:]PORT
                       serve /metrics there instead of on the API port; with "all" the bank
                       takes PORT+1; HOST defaults to --host (SVC_METRICS_LISTEN)`,
  ),
  option(
    'sqlite-synchronous',
    'value',
    `--sqlite-synchronous full | off: off loses acknowledged writes on a crash; for benchmarks
                       only (SVC_SQLITE_SYNCHRONOUS, default full)`,
  ),
  option(
    'db-pool-size',
    'value',
    `--db-pool-size N     PostgreSQL: connections each service keeps, 1 to 1000 (SVC_DB_POOL_SIZE,
                       default 10)`,
  ),
  option(
    'db-pool-wait-ms',
    'value',
    `--db-pool-wait-ms MS PostgreSQL: how long a request waits for a free connection before a 503,
                       1 to 30000 (SVC_DB_POOL_WAIT_MS, default 10000)`,
  ),
  option(
    'db-pooler',
    'value',
    `--db-pooler none|transaction
                       PostgreSQL: transaction when PgBouncer in pool_mode=transaction stands
                       between, so that nothing is kept in a session (SVC_DB_POOLER, default none)`,
  ),
  option(
    'connections-per-client',
    'value',
    `--connections-per-client N
                       connections one client address may hold at once; its newcomer beyond them
                       takes the place of its oldest one not being answered, or is closed; 0: no
                       bound but the server's (SVC_CONNECTIONS_PER_CLIENT, default a quarter of
                       the server's connections)`,
  ),
  option(
    'require-if-match',
    'switch',
    `--require-if-match   a PUT or DELETE of an existing to-do without If-Match is refused (428);
                       a free id is answered as without it: PUT creates (If-None-Match: * too),
                       DELETE is 404 (SVC_REQUIRE_IF_MATCH=1)`,
  ),
];

const HELP_OPTION: OptionSpec = {
  name: 'help',
  variable: undefined,
  takes: 'switch',
  usage: '--help               this text',
};

/** A core option; its variable is SVC_ and its name in capitals. */
function option(name: string, takes: OptionSpec['takes'], usage: string): OptionSpec {
  return { name, variable: `SVC_${name.toUpperCase().replaceAll('-', '_')}`, takes, usage };
}

/** Every option: the core's, then each feature's in the list's order. */
const OPTIONS: readonly OptionSpec[] = [
  ...CORE_OPTIONS,
  ...FEATURES.flatMap((feature) => feature.options),
  HELP_OPTION,
];

export const USAGE = `Usage: node dist/cli.js [all|todo|bank] [options]

Starts the to-do service (default port 8000), the banking service (8001), or both (all, the default).

The FastAPI migration kit (docs/migration.md; each command's --help lists its options):
  node dist/cli.js diff --primary URL [--secondary URL] --candidate URL --har FILE
  node dist/cli.js record --target URL --port N --har FILE

Options (each also read from the environment variable shown):
${usageOf(OPTIONS)}`;

const LOG_LEVELS: readonly LogLevel[] = ['info', 'warn', 'error', 'silent'];

export function readConfig(argv: readonly string[], env: NodeJS.ProcessEnv): Config {
  const warnings: SettingWarning[] = [];
  const { values, operand } = readOptions(argv, env, OPTIONS, (warning) => warnings.push(warning));
  const services = readServices(operand, env);
  const errors = readErrorFormat(values);
  const catchAll = values.on('catch-all');
  // Problem details always answer a failure with a JSON problem, so the option would change nothing
  // there.
  if (catchAll && errors !== 'unified')
    throw new ConfigError('--catch-all belongs to the unified format: add --errors unified');
  const metrics = onOff(values.text('metrics') ?? 'on', 'metrics');
  const dbText = values.text('db');
  const accountsText = values.text('accounts');
  return {
    services,
    host: values.text('host') ?? '127.0.0.1',
    port: readPort(values.text('port'), services),
    db: dbText === undefined ? undefined : parseDb(dbText),
    errors,
    catchAll,
    accounts: accountsText === undefined ? undefined : parseAccounts(accountsText),
    logLevel: readLogLevel(values),
    accessLog: onOff(values.text('access-log') ?? 'on', 'access-log'),
    metrics,
    metricsListen: readMetricsListen(values.text('metrics-listen'), metrics),
    sqliteSynchronous: readSynchronous(values),
    ...readPool(values.text('db-pool-size'), values.text('db-pool-wait-ms')),
    dbPooler: readPooler(values.text('db-pooler'), dbText),
    requireIfMatch: values.on('require-if-match'),
    connectionsPerClient: readConnectionsPerClient(values.text('connections-per-client')),
    features: FEATURES.flatMap((feature) => configureFeature(feature, values) ?? []),
    warnings,
    help: values.on('help'),
  };
}

function readServices(service: string | undefined, env: NodeJS.ProcessEnv): ServiceName[] {
  const which = service ?? (env.SVC_SERVICE === '' ? undefined : env.SVC_SERVICE) ?? 'all';
  if (which !== 'all' && which !== 'todo' && which !== 'bank') {
    throw new ConfigError(`unknown service "${which}": expected all, todo or bank`);
  }
  return which === 'all' ? ['todo', 'bank'] : [which];
}

function readErrorFormat(values: OptionValues): ErrorFormatName {
  const errors = values.text('errors') ?? 'default';
  if (!ERROR_FORMAT_NAMES.includes(errors as ErrorFormatName)) {
    throw new ConfigError(`--errors must be ${ERROR_FORMAT_NAMES.join(', ')}, not "${errors}"`);
  }
  return errors as ErrorFormatName;
}

function readLogLevel(values: OptionValues): LogLevel {
  const logLevel = values.text('log-level') ?? 'info';
  if (!LOG_LEVELS.includes(logLevel as LogLevel))
    throw new ConfigError(`--log-level must be one of ${LOG_LEVELS.join(', ')}`);
  return logLevel as LogLevel;
}

function readSynchronous(values: OptionValues): Config['sqliteSynchronous'] {
  const synchronous = (values.text('sqlite-synchronous') ?? 'full').toUpperCase();
  if (synchronous !== 'FULL' && synchronous !== 'OFF')
    throw new ConfigError('--sqlite-synchronous must be full or off');
  return synchronous;
}

/** The first service's port; the services take consecutive ports (0 lets the system choose for each). */
function readPort(text: string | undefined, services: readonly ServiceName[]): number {
  const port = text === undefined ? DEFAULT_PORTS[services[0] as ServiceName] : parsePort(text);
  if (port !== 0 && port + services.length - 1 > 65535)
    throw new ConfigError(`--port ${port} leaves no port for the bank (it takes port + 1)`);
  return port;
}

/** --metrics-listen, which only means something while /metrics is served. */
function readMetricsListen(text: string | undefined, metrics: boolean): Config['metricsListen'] {
  const metricsListen = text === undefined ? undefined : parseListen(text);
  if (metricsListen !== undefined && !metrics)
    throw new ConfigError('--metrics-listen serves /metrics: it needs --metrics on');
  return metricsListen;
}

/** --connections-per-client: a whole number, 0 for no bound of an address's own. */
function readConnectionsPerClient(text: string | undefined): number | undefined {
  return text === undefined
    ? undefined
    : parseBounded(text, '--connections-per-client', 0, 999_999);
}

/** PostgreSQL's pool: its size and how long a request waits for a connection. */
function readPool(
  sizeText: string | undefined,
  waitText: string | undefined,
): Pick<Config, 'dbPoolSize' | 'dbPoolWaitMs'> {
  return {
    dbPoolSize:
      sizeText === undefined ? undefined : parseBounded(sizeText, '--db-pool-size', 1, 1000),
    dbPoolWaitMs:
      waitText === undefined ? undefined : parseBounded(waitText, '--db-pool-wait-ms', 1, 30_000),
  };
}

function parsePort(text: string): number {
  const port = /^\d{1,5}$/.test(text) ? Number(text) : NaN;
  if (!(port >= 0 && port <= 65535))
    throw new ConfigError(`--port must be a number from 0 to 65535, not "${text}"`);
  return port;
}

/** `[HOST:]PORT`; an IPv6 host in brackets, as in a URL (`[::1]:9464`). */
function parseListen(text: string): { readonly host: string | undefined; readonly port: number } {
  const match = /^(?:(\[[0-9a-fA-F:.]+\]|[^:[\]]+):)?(\d{1,5})$/.exec(text);
  const port = match === null ? NaN : Number(match[2]);
  if (match === null || !(port >= 0 && port <= 65535)) {
    throw new ConfigError(
      `--metrics-listen must be [HOST:]PORT with PORT from 0 to 65535, not "${text}"`,
    );
  }
  const host = match[1]?.replace(/^\[(.*)\]$/, '$1');
  return { host, port };
}

/** --db-pooler: known values only, and only where there is a PostgreSQL connection to pool. */
function readPooler(text: string | undefined, dbText: string | undefined): Pooler | undefined {
  if (text === undefined) return undefined;
  const pooler = POOLERS.find((known) => known === text);
  if (pooler === undefined)
    throw new ConfigError(`--db-pooler must be ${POOLERS.join(' or ')}, not "${text}"`);
  if (!(
    dbText?.startsWith('postgres://') === true || dbText?.startsWith('postgresql://') === true
  )) {
    throw new ConfigError('--db-pooler is for PostgreSQL: it needs --db postgres://…');
  }
  return pooler;
}

export function parseDb(text: string): DbSpec {
  if (text === 'memory') return { kind: 'memory' };
  if (text.startsWith('sqlite:')) {
    const path = text.slice('sqlite:'.length);
    if (path === '')
      throw new ConfigError('--db sqlite: needs a file path, e.g. sqlite:./data/todo.sqlite');
    return { kind: 'sqlite', path };
  }
  if (text.startsWith('postgres://') || text.startsWith('postgresql://')) {
    try {
      new URL(text);
    } catch {
      throw new ConfigError('--db postgres URL is not a valid URL');
    }
    return { kind: 'postgres', url: text };
  }
  throw new ConfigError('--db must be memory, sqlite:PATH or postgres://…');
}

const BALANCE_MAX = Number.MAX_SAFE_INTEGER;

export function parseAccounts(text: string): ReadonlyMap<string, number> {
  const accounts = new Map<string, number>();
  for (const entry of text.split(',')) {
    const eq = entry.lastIndexOf('=');
    const name = entry.slice(0, eq);
    const balanceText = entry.slice(eq + 1);
    if (eq <= 0 || !/^\d{1,16}$/.test(balanceText) || Number(balanceText) > BALANCE_MAX) {
      throw new ConfigError(
        `--accounts entry "${entry}" is not name=balance with a balance from 0 to ${BALANCE_MAX}`,
      );
    }
    if (accounts.has(name)) throw new ConfigError(`--accounts names "${name}" twice`);
    accounts.set(name, Number(balanceText));
  }
  return accounts;
}
