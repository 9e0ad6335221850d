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
import { connectionsMaxFor } from './http/connection-guard.js';
import { createBankService } from './bank/service.js';
import { INITIAL_ACCOUNTS } from './bank/model.js';
import { createTodoService } from './todo/service.js';
import { limiterFor, type ServiceLimiter } from './features/rate-limits/limiter-for.js';
import { PoolerMismatch } from './db/postgres/pooler.js';
import type { StoreObserver } from './db/store-observer.js';
import type { Tracing } from './features/tracing/tracing.js';

function dbFor(service: ServiceName, config: Config): DbSpec {
  return config.db ?? { kind: 'sqlite', path: `./data/${service}.sqlite` };
}

async function createService(
  service: ServiceName,
  config: Config,
  log: Logger,
  metrics: Registry | undefined,
  tracing: Tracing | undefined,
  limiting: ServiceLimiter | undefined,
): Promise<ServiceDefinition> {
  const counted = metrics === undefined ? undefined : storeMetrics(service, metrics);
  // With tracing on, the store's batches are spans too.
  const observer: StoreObserver | undefined =
    tracing === undefined ? counted : { ...counted, batchStarted: tracing.batchStarted };
  const storeOptions = {
    sqliteSynchronous: config.sqliteSynchronous,
    log,
    observer,
    poolSize: config.dbPoolSize,
    poolWaitMs: config.dbPoolWaitMs,
    pooler: config.dbPooler,
    idempotencyTtlMs: config.idempotencyTtlMs,
    rider: limiting?.rider,
  };
  switch (service) {
    case 'todo':
      return createTodoService(dbFor(service, config), storeOptions, {
        requireIfMatch: config.requireIfMatch,
      });
    case 'bank':
      return createBankService(
        dbFor(service, config),
        config.accounts ?? INITIAL_ACCOUNTS,
        {
          name: config.errors,
          catchAll: config.catchAll,
        },
        storeOptions,
      );
  }
}

/** The server options of the index-th service of this process (ports are consecutive). */
function serverOptionsFor(
  service: ServiceName,
  index: number,
  config: Config,
  serviceLog: Logger,
  metrics: Registry | undefined,
  connectionsMax: number,
  tracing: Tracing | undefined,
  limiting: ServiceLimiter | undefined,
): ServerOptions {
  return {
    host: config.host,
    port: config.port === 0 ? 0 : config.port + index,
    errorFormat: { name: config.errors, catchAll: config.catchAll },
    log: serviceLog,
    accessLog: config.accessLog,
    metrics,
    service,
    connectionsMax,
    connectionsPerClient: config.connectionsPerClient,
    idempotency: { required: config.requireIdempotencyKey, ttlMs: config.idempotencyTtlMs },
    cors: config.cors,
    crossOriginProtection: config.crossOriginProtection,
    deadlineMs: config.deadlineMs,
    shedding: config.shedding,
    tracer: tracing?.requests,
    rateLimiting:
      config.rateLimits === undefined || limiting === undefined
        ? undefined
        : {
            limits: config.rateLimits,
            limiter: limiting.limiter,
            whenDown: config.rateLimitStoreDown,
            trustedProxies: config.trustProxy,
          },
    metricsListen:
      config.metricsListen === undefined
        ? undefined
        : {
            host: config.metricsListen.host ?? config.host,
            port: config.metricsListen.port === 0 ? 0 : config.metricsListen.port + index,
          },
  };
}

async function main(): Promise<void> {
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
  const running: RunningServer[] = [];
  const tracings = await tracingsFor(config);
  // Installed before the first "listening" line: until a listener exists, SIGTERM kills the
  // process outright, and a supervisor may send it as soon as it reads that line. A repeated
  // signal changes nothing: Ctrl-C under `npm start` reaches us twice, from the terminal and
  // from npm, which passes on what it receives.
  let stopping = false;
  const stop = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    log.info('shutting down', { signal });
    Promise.all(running.map((server) => server.close())).then(
      async (reports) => {
        await tracings.stop();
        log.info('shut down', { connectionsCut: reports.some((report) => report.connectionsCut) });
        await log.close();
        process.exit(0);
      },
      (error: unknown) => fail(log, error),
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  // The services of this process share its open-file limit.
  const connectionsMax = connectionsMaxFor(config.services.length);
  try {
    for (const [index, service] of config.services.entries()) {
      const serviceLog = log.child({ service });
      const metrics = config.metrics ? createMetricsRegistry() : undefined;
      const tracing = tracings.start(service, metrics, serviceLog);
      // Before the store: the store's reads carry a shared limiter's decisions.
      const limiting =
        config.rateLimits === undefined
          ? undefined
          : await limiterFor(service, config.rateLimits, config.db, serviceLog, config.dbPooler);
      const definition = await createService(
        service,
        config,
        serviceLog,
        metrics,
        tracing,
        limiting,
      );
      const server = await startServer(
        definition,
        serverOptionsFor(
          service,
          index,
          config,
          serviceLog,
          metrics,
          connectionsMax,
          tracing,
          limiting,
        ),
      );
      running.push(server);
      logListening(serviceLog, service, config, definition, server);
    }
  } catch (error) {
    await Promise.allSettled(running.map((server) => server.close()));
    await tracings.stop();
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
    // Said only when on, so that the line of a service without limits is as it was.
    ...(config.rateLimits === undefined
      ? {}
      : { rateLimits: config.db?.kind === 'postgres' ? 'postgres' : 'in-process' }),
    // Said only when on; the collector's URL is not: it may hold a credential.
    ...(config.tracing === undefined ? {} : { tracing: config.tracing.protocol }),
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

/**
 * Tracing (issue 43): the SDK is loaded only when it is on. One tracer per service; stop(), after
 * the servers closed (their store's last batches included), sends the last spans within a
 * bounded time.
 */
async function tracingsFor(config: Config): Promise<{
  start(service: ServiceName, metrics: Registry | undefined, log: Logger): Tracing | undefined;
  stop(): Promise<unknown>;
}> {
  const tracingConfig = config.tracing;
  const started: Tracing[] = [];
  const tracingModule =
    tracingConfig === undefined ? undefined : await import('./features/tracing/tracing.js');
  return {
    start(service, metrics, log) {
      if (tracingModule === undefined || tracingConfig === undefined) return undefined;
      const tracing = tracingModule.startTracing(tracingConfig, {
        service,
        registry: metrics,
        log,
      });
      started.push(tracing);
      return tracing;
    },
    stop: () => Promise.all(started.map((tracing) => tracing.shutdown())),
  };
}
