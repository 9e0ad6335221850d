// Configuration is read once, from the command line and then the environment, into one typed
// object. Anything wrong stops the process with one line saying what, and exit code 2.
import type { LogLevel } from './observe/log.js';
import { ERROR_FORMAT_NAMES, type ErrorFormatName } from './http/render.js';
import { parseCorsOrigins, type CorsPolicy } from './features/cors/cors.js';
import { DEADLINE_MS_DEFAULT, DEADLINE_MS_MAX } from './features/deadlines/deadline.js';
import type { SheddingPolicy } from './features/shedding/load-shedding.js';
import {
  parseTrustedProxies,
  PROXY_HEADERS,
  type ProxyHeader,
  type TrustedProxies,
} from './features/rate-limits/client-address.js';
import { WHEN_LIMITER_DOWN_DEFAULT, type WhenLimiterDown } from './features/rate-limits/gate.js';
import { parseRateLimits, type RateLimits } from './rate-limits/policy.js';
import { POOLERS, type Pooler } from './db/postgres/pooler.js';
import { readTracingConfig, type TracingConfig } from './features/tracing/options.js';

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
  /** The operations that take an Idempotency-Key refuse a request without one. */
  readonly requireIdempotencyKey: boolean;
  /** How long a recorded response replays for its key. */
  readonly idempotencyTtlMs: number;
  /** A PUT of an existing to-do, or a DELETE, without If-Match answers 428 (docs/conditional-requests.md). */
  readonly requireIfMatch: boolean;
  /** The origins whose pages may call the services (--cors-origin); undefined: CORS off. */
  readonly cors: CorsPolicy | undefined;
  /** Refuse cross-site unsafe requests from browsers (--cross-origin-protection); always on with --cors-origin. */
  readonly crossOriginProtection: boolean;
  /** A request still waiting this long after it arrived whole is answered 504; 0: no deadline. */
  readonly deadlineMs: number;
  /** Connections one client address may hold at once (--connections-per-client); 0: no bound of its own; undefined: the default. */
  readonly connectionsPerClient: number | undefined;
  /** The saturation signals' thresholds past which requests are shed; undefined: none is. */
  readonly shedding: SheddingPolicy | undefined;
  /** Requests per client and kind (--rate-limit); undefined: no limits. */
  readonly rateLimits: RateLimits | undefined;
  /** Proxies whose header (--trust-proxy-header) names the client (--trust-proxy). */
  readonly trustProxy: TrustedProxies | undefined;
  /** With limits held in PostgreSQL: what a request gets while the database cannot decide. */
  readonly rateLimitStoreDown: WhenLimiterDown;
  /** OpenTelemetry traces over OTLP/HTTP (--otel-endpoint and the OTEL_* variables); undefined: off. */
  readonly tracing: TracingConfig | undefined;
  readonly help: boolean;
}

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

export const DEFAULT_PORTS: Readonly<Record<ServiceName, number>> = { todo: 8000, bank: 8001 };

export const USAGE = `Usage: node dist/cli.js [all|todo|bank] [options]

Starts the to-do service (default port 8000), the banking service (8001), or both (all, the default).

Options (each also read from the environment variable shown):
  --host H             address to listen on (SVC_HOST, default 127.0.0.1)
  --port N             port of the first service; with "all" the bank takes N+1 (SVC_PORT)
  --db SPEC            memory | sqlite:PATH | postgres://user@host:port/db (SVC_DB,
                       default: sqlite:./data/todo.sqlite and sqlite:./data/bank.sqlite)
  --errors FORMAT      default | unified | problem: the error body format; problem is RFC 9457
                       application/problem+json (SVC_ERRORS, default default)
  --catch-all          unified format: unhandled failures as a JSON 500 (SVC_CATCH_ALL=1)
  --accounts LIST      initial bank accounts, name=balance,... (SVC_ACCOUNTS, default alice=100,bob=5)
  --log-level LEVEL    info | warn | error | silent (SVC_LOG_LEVEL, default info)
  --access-log on|off  one info line per request (SVC_ACCESS_LOG, default on)
  --metrics on|off     GET /metrics for Prometheus (SVC_METRICS, default on)
  --metrics-listen [HOST:]PORT
                       serve /metrics there instead of on the API port; with "all" the bank
                       takes PORT+1; HOST defaults to --host (SVC_METRICS_LISTEN)
  --sqlite-synchronous full | off: off loses acknowledged writes on a crash; for benchmarks
                       only (SVC_SQLITE_SYNCHRONOUS, default full)
  --db-pool-size N     PostgreSQL: connections each service keeps, 1 to 1000 (SVC_DB_POOL_SIZE,
                       default 10)
  --db-pool-wait-ms MS PostgreSQL: how long a request waits for a free connection before a 503,
                       1 to 30000 (SVC_DB_POOL_WAIT_MS, default 10000)
  --db-pooler none|transaction
                       PostgreSQL: transaction when PgBouncer in pool_mode=transaction stands
                       between, so that nothing is kept in a session (SVC_DB_POOLER, default none)
  --require-idempotency-key
                       POST /todos and POST /withdraw/... refuse a request without an
                       Idempotency-Key header (SVC_REQUIRE_IDEMPOTENCY_KEY=1)
  --require-if-match   PUT of an existing to-do and DELETE refuse (428) a request without
                       If-Match (SVC_REQUIRE_IF_MATCH=1)
  --idempotency-ttl H  hours an Idempotency-Key replays its answer before it is pruned
                       (SVC_IDEMPOTENCY_TTL, default 24)
  --cors-origin LIST   origins whose pages may call the services, scheme://host[:port],...
                       (SVC_CORS_ORIGIN, default none: CORS off); implies --cross-origin-protection
  --cross-origin-protection
                       refuse (403) a POST, PUT or DELETE that a browser marks as sent by a page
                       on another site, the --cors-origin origins excepted
                       (SVC_CROSS_ORIGIN_PROTECTION=1, default off)
  --deadline-ms MS     a request still waiting for the database this long after it arrived is
                       answered 504; 0 turns deadlines off (SVC_DEADLINE_MS, default 15000)
  --connections-per-client N
                       connections one client address may hold at once; its newcomer beyond them
                       takes the place of its oldest one not being answered, or is closed; 0: no
                       bound but the server's (SVC_CONNECTIONS_PER_CLIENT, default a quarter of
                       the server's connections)
  --shed-waiting N     answer new requests 503 while N requests wait for the database
                       (SVC_SHED_WAITING, default off)
  --shed-loop-busy PERCENT
                       answer a share of new requests 503, steered to keep the event loop busy
                       at most PERCENT (1 to 99) of the time; only for requests that cost several
                       times a 503 (SVC_SHED_LOOP_BUSY, default off)
  --rate-limit LIMITS  requests per client: writes=RATE/s:BURST,reads=RATE/s:BURST, either part
                       optional (SVC_RATE_LIMIT, default none: no limits); with --db postgres://
                       the limits hold across every instance on the database
  --rate-limit-store-down open|closed
                       with --db postgres://, while the database cannot decide: admit (open) or
                       answer 503 (closed) (SVC_RATE_LIMIT_STORE_DOWN, default open)
  --trust-proxy LIST   addresses or subnets of proxies whose --trust-proxy-header names the client
                       for the rate limits, e.g. 10.0.0.0/8,::1 (SVC_TRUST_PROXY, default none)
  --trust-proxy-header x-forwarded-for|forwarded
                       the one header the trusted proxies set; the other is ignored
                       (SVC_TRUST_PROXY_HEADER, default x-forwarded-for)
  --otel-endpoint URL  send OpenTelemetry traces over OTLP/HTTP to the collector at URL (spans go
                       to URL/v1/traces); the standard OTEL_EXPORTER_OTLP_* and OTEL_* variables
                       apply (OTEL_EXPORTER_OTLP_ENDPOINT, default none: tracing off)
  --help               this text
`;

const LOG_LEVELS: readonly LogLevel[] = ['info', 'warn', 'error', 'silent'];

const REPLACED_SHED_LOOP_DELAY =
  '--shed-loop-delay-ms (SVC_SHED_LOOP_DELAY_MS) was replaced by --shed-loop-busy PERCENT (SVC_SHED_LOOP_BUSY): see docs/load-shedding.md';

export function readConfig(argv: readonly string[], env: NodeJS.ProcessEnv): Config {
  const { flags, service } = readArgs(argv);
  const pick = pickerOf(flags, env);
  const services = readServices(service, env);
  const errors = readErrorFormat(pick);
  const logLevel = readLogLevel(pick);
  const catchAll = flags.get('catch-all') === true || switchOn(env, 'SVC_CATCH_ALL');
  const requireIdempotencyKey =
    flags.get('require-idempotency-key') === true || switchOn(env, 'SVC_REQUIRE_IDEMPOTENCY_KEY');
  const requireIfMatch =
    flags.get('require-if-match') === true || switchOn(env, 'SVC_REQUIRE_IF_MATCH');
  const ttlText = pick('idempotency-ttl', 'SVC_IDEMPOTENCY_TTL');
  // Problem details always answer a failure with a JSON problem, so the option would change nothing
  // there.
  if (catchAll && errors !== 'unified')
    throw new ConfigError('--catch-all belongs to the unified format: add --errors unified');
  const synchronous = readSynchronous(pick);
  const accessLog = onOff(pick('access-log', 'SVC_ACCESS_LOG') ?? 'on', 'access-log');
  const metrics = onOff(pick('metrics', 'SVC_METRICS') ?? 'on', 'metrics');
  const dbText = pick('db', 'SVC_DB');
  const accountsText = pick('accounts', 'SVC_ACCOUNTS');
  const portText = pick('port', 'SVC_PORT');
  const poolSizeText = pick('db-pool-size', 'SVC_DB_POOL_SIZE');
  const poolWaitText = pick('db-pool-wait-ms', 'SVC_DB_POOL_WAIT_MS');
  const dbPooler = readPooler(pick('db-pooler', 'SVC_DB_POOLER'), dbText);
  const corsText = pick('cors-origin', 'SVC_CORS_ORIGIN');
  const metricsListen = readMetricsListen(pick('metrics-listen', 'SVC_METRICS_LISTEN'), metrics);
  const deadlineText = pick('deadline-ms', 'SVC_DEADLINE_MS');
  const shedding = readShedding(pick, env);
  const cors = corsText === undefined ? undefined : parseCorsOrigins(corsText);
  if (typeof cors === 'string') throw new ConfigError(`--cors-origin: ${cors}`);
  const crossOriginProtection =
    cors !== undefined ||
    flags.get('cross-origin-protection') === true ||
    switchOn(env, 'SVC_CROSS_ORIGIN_PROTECTION');
  const { rateLimits, trustProxy, rateLimitStoreDown } = readRateLimits(pick, dbText);
  return {
    services,
    host: pick('host', 'SVC_HOST') ?? '127.0.0.1',
    port: readPort(portText, services),
    db: dbText === undefined ? undefined : parseDb(dbText),
    errors,
    catchAll,
    accounts: accountsText === undefined ? undefined : parseAccounts(accountsText),
    logLevel,
    accessLog,
    metrics,
    metricsListen,
    sqliteSynchronous: synchronous,
    ...readPool(poolSizeText, poolWaitText),
    dbPooler,
    requireIdempotencyKey,
    requireIfMatch,
    idempotencyTtlMs:
      ttlText === undefined ? IDEMPOTENCY_TTL_HOURS_DEFAULT * HOUR_MS : parseTtl(ttlText),
    cors,
    crossOriginProtection,
    deadlineMs:
      deadlineText === undefined
        ? DEADLINE_MS_DEFAULT
        : parseBounded(deadlineText, '--deadline-ms', 0, DEADLINE_MS_MAX),
    ...readConnectionsPerClient(pick),
    shedding,
    rateLimits,
    trustProxy,
    rateLimitStoreDown,
    tracing: readTracing(flags.get('otel-endpoint'), env),
    help: flags.get('help') === true,
  };
}

/** The options that take no value; every other one takes one. */
const SWITCHES = [
  'help',
  'catch-all',
  'require-idempotency-key',
  'require-if-match',
  'cross-origin-protection',
];
const VALUED_OPTIONS = [
  'host',
  'port',
  'db',
  'errors',
  'accounts',
  'log-level',
  'access-log',
  'metrics',
  'sqlite-synchronous',
  'db-pool-size',
  'db-pool-wait-ms',
  'db-pooler',
  'idempotency-ttl',
  'cors-origin',
  'metrics-listen',
  'deadline-ms',
  'connections-per-client',
  'shed-waiting',
  'shed-loop-busy',
  'rate-limit',
  'rate-limit-store-down',
  'trust-proxy',
  'trust-proxy-header',
  'otel-endpoint',
];

/** The command line as given: the one service named, and each option with its value. */
function readArgs(argv: readonly string[]): {
  readonly flags: ReadonlyMap<string, string | true>;
  readonly service: string | undefined;
} {
  const flags = new Map<string, string | true>();
  let service: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (!arg.startsWith('--')) {
      if (service !== undefined) throw new ConfigError(`unexpected argument "${arg}"`);
      service = arg;
      continue;
    }
    const [name, inline] = splitFlag(arg);
    if (SWITCHES.includes(name)) {
      if (inline !== undefined) throw new ConfigError(`--${name} takes no value`);
      flags.set(name, true);
      continue;
    }
    if (name === 'shed-loop-delay-ms') throw new ConfigError(REPLACED_SHED_LOOP_DELAY);
    if (!VALUED_OPTIONS.includes(name)) throw new ConfigError(`unknown option --${name}`);
    const value = inline ?? argv[++i];
    if (value === undefined) throw new ConfigError(`--${name} needs a value`);
    flags.set(name, value);
  }
  return { flags, service };
}

type OptionPicker = (flag: string, variable: string) => string | undefined;

/** An option's text, from the command line first, then the environment. */
function pickerOf(flags: ReadonlyMap<string, string | true>, env: NodeJS.ProcessEnv): OptionPicker {
  // An empty variable counts as unset; an empty option value is a mistake.
  return (flag, variable) => {
    const value = flags.get(flag);
    if (value === '') throw new ConfigError(`--${flag} needs a value`);
    return typeof value === 'string' ? value : env[variable] === '' ? undefined : env[variable];
  };
}

function readServices(service: string | undefined, env: NodeJS.ProcessEnv): ServiceName[] {
  const which = service ?? (env.SVC_SERVICE === '' ? undefined : env.SVC_SERVICE) ?? 'all';
  if (which !== 'all' && which !== 'todo' && which !== 'bank') {
    throw new ConfigError(`unknown service "${which}": expected all, todo or bank`);
  }
  return which === 'all' ? ['todo', 'bank'] : [which];
}

function readErrorFormat(pick: OptionPicker): ErrorFormatName {
  const errors = pick('errors', 'SVC_ERRORS') ?? 'default';
  if (!ERROR_FORMAT_NAMES.includes(errors as ErrorFormatName)) {
    throw new ConfigError(`--errors must be ${ERROR_FORMAT_NAMES.join(', ')}, not "${errors}"`);
  }
  return errors as ErrorFormatName;
}

function readLogLevel(pick: OptionPicker): LogLevel {
  const logLevel = pick('log-level', 'SVC_LOG_LEVEL') ?? 'info';
  if (!LOG_LEVELS.includes(logLevel as LogLevel))
    throw new ConfigError(`--log-level must be one of ${LOG_LEVELS.join(', ')}`);
  return logLevel as LogLevel;
}

function readSynchronous(pick: OptionPicker): Config['sqliteSynchronous'] {
  const synchronous = (
    pick('sqlite-synchronous', 'SVC_SQLITE_SYNCHRONOUS') ?? 'full'
  ).toUpperCase();
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

/** --shed-waiting and --shed-loop-busy: either signal alone sheds. */
function readShedding(pick: OptionPicker, env: NodeJS.ProcessEnv): SheddingPolicy | undefined {
  const shedWaitingText = pick('shed-waiting', 'SVC_SHED_WAITING');
  // A deployment that still sets the replaced signal would otherwise lose its shedding unseen.
  if (env.SVC_SHED_LOOP_DELAY_MS !== undefined && env.SVC_SHED_LOOP_DELAY_MS !== '')
    throw new ConfigError(REPLACED_SHED_LOOP_DELAY);
  const shedBusyText = pick('shed-loop-busy', 'SVC_SHED_LOOP_BUSY');
  if (shedWaitingText === undefined && shedBusyText === undefined) return undefined;
  return {
    waitingMax:
      shedWaitingText === undefined
        ? undefined
        : parseBounded(shedWaitingText, '--shed-waiting', 1, 100_000),
    loopBusy:
      shedBusyText === undefined
        ? undefined
        : parseBounded(shedBusyText, '--shed-loop-busy', 1, 99) / 100,
  };
}

/** An environment switch: 1 or true on, 0, false or empty off; anything else stops the process. */
function switchOn(env: NodeJS.ProcessEnv, variable: string): boolean {
  const value = env[variable];
  if (value !== undefined && !['', '0', '1', 'true', 'false'].includes(value))
    throw new ConfigError(`${variable} must be 1 or 0`);
  return value === '1' || value === 'true';
}

/** --rate-limit and the options that only mean something beside it. */
function readRateLimits(
  pick: OptionPicker,
  dbText: string | undefined,
): Pick<Config, 'rateLimits' | 'trustProxy' | 'rateLimitStoreDown'> {
  const limitsText = pick('rate-limit', 'SVC_RATE_LIMIT');
  const proxiesText = pick('trust-proxy', 'SVC_TRUST_PROXY');
  const downText = pick('rate-limit-store-down', 'SVC_RATE_LIMIT_STORE_DOWN');
  const rateLimits = limitsText === undefined ? undefined : parseRateLimits(limitsText);
  if (typeof rateLimits === 'string') throw new ConfigError(`--rate-limit: ${rateLimits}`);
  const headerText = pick('trust-proxy-header', 'SVC_TRUST_PROXY_HEADER')?.toLowerCase();
  if (headerText !== undefined && !PROXY_HEADERS.includes(headerText as ProxyHeader))
    throw new ConfigError(
      `--trust-proxy-header must be x-forwarded-for or forwarded, not "${headerText}"`,
    );
  if (headerText !== undefined && proxiesText === undefined)
    throw new ConfigError(
      '--trust-proxy-header says where the trusted proxies name the client: it needs --trust-proxy',
    );
  const trustProxy =
    proxiesText === undefined
      ? undefined
      : parseTrustedProxies(proxiesText, headerText as ProxyHeader | undefined);
  if (typeof trustProxy === 'string') throw new ConfigError(`--trust-proxy: ${trustProxy}`);
  if (trustProxy !== undefined && rateLimits === undefined)
    throw new ConfigError(
      '--trust-proxy names the client for the rate limits: it needs --rate-limit',
    );
  if (downText !== undefined && downText !== 'open' && downText !== 'closed') {
    throw new ConfigError(`--rate-limit-store-down must be open or closed, not "${downText}"`);
  }
  const shared =
    dbText?.startsWith('postgres://') === true || dbText?.startsWith('postgresql://') === true;
  if (downText !== undefined && !(rateLimits !== undefined && shared)) {
    throw new ConfigError(
      '--rate-limit-store-down is for limits held in PostgreSQL: it needs --rate-limit and --db postgres://…',
    );
  }
  return { rateLimits, trustProxy, rateLimitStoreDown: downText ?? WHEN_LIMITER_DOWN_DEFAULT };
}

const HOUR_MS = 60 * 60 * 1000;
const IDEMPOTENCY_TTL_HOURS_DEFAULT = 24;
/** A year: keys kept longer would only grow the table. */
const IDEMPOTENCY_TTL_HOURS_MAX = 24 * 366;

/** Hours, a decimal number (0.5 is half an hour), more than 0. */
function parseTtl(text: string): number {
  const hours = /^\d+(\.\d+)?$/.test(text) ? Number(text) : NaN;
  if (!(hours > 0 && hours <= IDEMPOTENCY_TTL_HOURS_MAX)) {
    throw new ConfigError(
      `--idempotency-ttl must be a number of hours above 0 and at most ${IDEMPOTENCY_TTL_HOURS_MAX}, not "${text}"`,
    );
  }
  return Math.round(hours * HOUR_MS);
}

function splitFlag(arg: string): [string, string | undefined] {
  const eq = arg.indexOf('=');
  return eq === -1 ? [arg.slice(2), undefined] : [arg.slice(2, eq), arg.slice(eq + 1)];
}

function onOff(text: string, flag: string): boolean {
  if (text !== 'on' && text !== 'off')
    throw new ConfigError(`--${flag} must be on or off, not "${text}"`);
  return text === 'on';
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

function parseBounded(text: string, flag: string, min: number, max: number): number {
  const value = /^\d{1,6}$/.test(text) ? Number(text) : NaN;
  if (!(value >= min && value <= max))
    throw new ConfigError(`${flag} must be a whole number from ${min} to ${max}, not "${text}"`);
  return value;
}

/** --connections-per-client: a whole number, 0 for no bound of an address's own. */
function readConnectionsPerClient(pick: OptionPicker): Pick<Config, 'connectionsPerClient'> {
  const text = pick('connections-per-client', 'SVC_CONNECTIONS_PER_CLIENT');
  return {
    connectionsPerClient:
      text === undefined ? undefined : parseBounded(text, '--connections-per-client', 0, 999_999),
  };
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

/** --otel-endpoint and the OTEL_* variables (features/tracing/options.ts); undefined: tracing off. */
function readTracing(
  endpoint: string | boolean | undefined,
  env: NodeJS.ProcessEnv,
): TracingConfig | undefined {
  if (endpoint === '') throw new ConfigError('--otel-endpoint needs a value');
  try {
    return readTracingConfig(typeof endpoint === 'string' ? endpoint : undefined, env);
  } catch (error) {
    throw new ConfigError((error as Error).message);
  }
}
