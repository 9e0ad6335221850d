#!/usr/bin/env node
// Starts the services named on the command line; `npm start` runs this with no arguments.
import type { Registry } from 'prom-client';
import {
  ConfigError,
  readConfig,
  USAGE,
  type Config,
  type DbSpec,
  type ServiceName,
} from './config.js';
import type { ServiceDefinition } from './http/service.js';
import { createLogger, type Logger } from './observe/log.js';
import { createMetricsRegistry } from './observe/metrics.js';
import { storeMetrics } from './observe/store-metrics.js';
import { startServer, type RunningServer, type ServerOptions } from './server.js';
import { connectionsMaxFor } from './http/connections/connection-guard.js';
import { createBankService } from './bank/service.js';
import { INITIAL_ACCOUNTS } from './bank/model.js';
import { createTodoService } from './todo/service.js';
import { PoolerMismatch } from './db/postgres/pooler.js';
import type { StoreOptions } from './db/store-options.js';
import { joinAll, storeHooksOf, type Joined } from './features/feature.js';

function dbFor(service: ServiceName, config: Config): DbSpec {
  return config.db ?? { kind: 'sqlite', path: `./data/${service}.sqlite` };
}

function createService(
  service: ServiceName,
  config: Config,
  storeOptions: StoreOptions,
): Promise<ServiceDefinition> {
  switch (service) {
    case 'todo':
      return createTodoService(dbFor(service, config), storeOptions, {
        requireIfMatch: config.requireIfMatch,
      });
    case 'bank':
      return createBankService(
        dbFor(service, config),
        config.accounts ?? INITIAL_ACCOUNTS,
        { name: config.errors, catchAll: config.catchAll },
        storeOptions,
      );
  }
}

/** The server options of the index-th service of this process (ports are consecutive). */
function serverOptionsFor(
  service: ServiceName,
  index: number,
  config: Config,
  log: Logger,
  metrics: Registry | undefined,
  features: readonly Joined[],
): ServerOptions {
  return {
    host: config.host,
    port: config.port === 0 ? 0 : config.port + index,
    errorFormat: { name: config.errors, catchAll: config.catchAll },
    log,
    accessLog: config.accessLog,
    metrics,
    service,
    // The services of this process share its open-file limit.
    connectionsMax: connectionsMaxFor(config.services.length),
    connectionsPerClient: config.connectionsPerClient,
    features,
    metricsListen:
      config.metricsListen === undefined
        ? undefined
        : {
            host: config.metricsListen.host ?? config.host,
            port: config.metricsListen.port === 0 ? 0 : config.metricsListen.port + index,
          },
  };
}

/** One service of the process: its features joined, its store opened, its server listening. */
async function startService(
  service: ServiceName,
  index: number,
  config: Config,
  log: Logger,
  started: { readonly servers: RunningServer[]; readonly routes: ServiceDefinition['routes'][] },
): Promise<void> {
  const serviceLog = log.child({ service });
  const metrics = config.metrics ? createMetricsRegistry() : undefined;
  // Before the store: a feature may give the store something (a limiter's rider, an observer).
  const joined = await joinAll(config.features, {
    service,
    db: dbFor(service, config),
    pooler: config.dbPooler,
    errorFormat: { name: config.errors, catchAll: config.catchAll },
    log: serviceLog,
    metrics,
  });
  try {
    const definition = await createService(service, config, {
      sqliteSynchronous: config.sqliteSynchronous,
      log: serviceLog,
      poolSize: config.dbPoolSize,
      poolWaitMs: config.dbPoolWaitMs,
      pooler: config.dbPooler,
      ...storeHooksOf(joined, metrics === undefined ? undefined : storeMetrics(service, metrics)),
    });
    started.routes.push(definition.routes);
    const server = await startServer(
      definition,
      serverOptionsFor(service, index, config, serviceLog, metrics, joined),
    );
    started.servers.push(server);
    logListening(serviceLog, service, config, definition, server, joined);
  } catch (error) {
    // What joined before the failure is let go; a started server lets go of its own when closed.
    if (started.servers.length <= index) await Promise.allSettled(joined.map((j) => j.close?.()));
    throw error;
  }
}

async function main(): Promise<void> {
  // The migration kit's commands take their own options (src/migration/, docs/migration.md).
  const [command, ...rest] = process.argv.slice(2);
  if (command === 'diff' || command === 'record') {
    const { runMigrationCommand } = await import('./migration/command.js');
    process.exit(await runMigrationCommand(command, rest));
  }
  let config: Config;
  try {
    config = readConfig(process.argv.slice(2), process.env);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`error: ${error.message} (see --help)\n`);
    process.exit(2);
  }
  if (config.help) {
    process.stdout.write(USAGE);
    return;
  }
  const log = createLogger(config.logLevel);
  for (const { setting, message } of config.warnings) log.warn(message, { setting });
  const started = { servers: [] as RunningServer[], routes: [] as ServiceDefinition['routes'][] };
  // Installed before the first "listening" line: until a listener exists, SIGTERM kills the
  // process outright, and a supervisor may send it as soon as it reads that line. A repeated
  // signal changes nothing: Ctrl-C under `npm start` reaches us twice, from the terminal and
  // from npm, which passes on what it receives.
  let stopping = false;
  const stop = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    log.info('shutting down', { signal });
    Promise.all(started.servers.map((server) => server.close())).then(
      async (reports) => {
        log.info('shut down', { connectionsCut: reports.some((report) => report.connectionsCut) });
        await log.close();
        process.exit(0);
      },
      (error: unknown) => fail(log, error),
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  try {
    for (const [index, service] of config.services.entries())
      await startService(service, index, config, log, started);
    // An option that names an operation no service of this process has is a mistake.
    for (const feature of config.features) feature.verify(started.routes.flat());
  } catch (error) {
    await Promise.allSettled(started.servers.map((server) => server.close()));
    await fail(log, error);
  }
}

/** The line that says a service is up, and how it runs. */
function logListening(
  serviceLog: Logger,
  service: ServiceName,
  config: Config,
  definition: ServiceDefinition,
  server: RunningServer,
  joined: readonly Joined[],
): void {
  // The store's kind only: a PostgreSQL URL may hold a password.
  serviceLog.info('listening', {
    version: definition.version,
    url: server.url,
    errors: config.errors,
    catchAll: config.catchAll,
    store: dbFor(service, config).kind,
    accessLog: config.accessLog,
    metrics: config.metrics,
    metricsUrl: server.metricsUrl,
    // What a feature says of itself, such as where its limits are held.
    ...Object.fromEntries(joined.flatMap((feature) => Object.entries(feature.said ?? {}))),
  });
}

async function fail(log: Logger, error: unknown): Promise<never> {
  if (error instanceof ConfigError || error instanceof PoolerMismatch) {
    process.stderr.write(`error: ${error.message}\n`);
    process.exit(2);
  }
  log.error('failed to start', { error });
  process.stderr.write(`error: ${error instanceof Error ? error.message : String(error)}\n`);
  await log.close();
  process.exit(1);
}

await main();
