#!/usr/bin/env node
// Starts the services named on the command line; `npm start` runs this with no arguments.
import { ConfigError, readConfig, USAGE, type Config, type DbSpec, type ServiceName } from './config.js';
import type { ServiceDefinition } from './http/service.js';
import { createLogger, type Logger } from './log.js';
import { startServer, type RunningServer } from './server.js';
import { createBankService } from './bank/service.js';
import { INITIAL_ACCOUNTS } from './bank/model.js';
import { createTodoService } from './todo/service.js';

function dbFor(service: ServiceName, config: Config): DbSpec {
  return config.db ?? { kind: 'sqlite', path: `./data/${service}.sqlite` };
}

async function createService(service: ServiceName, config: Config, log: Logger): Promise<ServiceDefinition> {
  const storeOptions = { sqliteSynchronous: config.sqliteSynchronous, log };
  switch (service) {
    case 'todo':
      return createTodoService(dbFor(service, config), storeOptions);
    case 'bank':
      return createBankService(dbFor(service, config), config.accounts ?? INITIAL_ACCOUNTS, {
        name: config.errors,
        catchAll: config.catchAll,
      }, storeOptions);
  }
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
  // Installed before the first "listening" line: until a listener exists, SIGTERM kills the
  // process outright, and a supervisor may send it as soon as it reads that line.
  const stop = (signal: string): void => {
    log.info('shutting down', { signal });
    Promise.all(running.map((server) => server.close())).then(
      () => process.exit(0),
      (error: unknown) => fail(log, error),
    );
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
  try {
    for (const [index, service] of config.services.entries()) {
      const definition = await createService(service, config, log);
      const server = await startServer(definition, {
        host: config.host,
        port: config.port === 0 ? 0 : config.port + index,
        errorFormat: { name: config.errors, catchAll: config.catchAll },
        log,
      });
      running.push(server);
      log.info('listening', { service, url: server.url, errors: config.errors, catchAll: config.catchAll });
    }
  } catch (error) {
    await Promise.allSettled(running.map((server) => server.close()));
    fail(log, error);
  }
}

function fail(log: Logger, error: unknown): never {
  if (error instanceof ConfigError) {
    process.stderr.write(`error: ${error.message}\n`);
    process.exit(2);
  }
  log.error('failed to start', { error });
  process.stderr.write(`error: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
}

await main();
