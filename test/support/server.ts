// Real servers for tests: each test starts its own, on a free port, and closes it.
import { INITIAL_ACCOUNTS } from '../../src/bank/model.js';
import { createBankService } from '../../src/bank/service.js';
import type { DbSpec } from '../../src/config.js';
import type { CorsPolicy } from '../../src/features/cors/cors.js';
import type { IdempotencyPolicy } from '../../src/features/idempotency/gate.js';
import type { SheddingPolicy } from '../../src/features/shedding/load-shedding.js';
import type { ErrorFormat } from '../../src/http/render.js';
import { createLogger, type Logger, type LogLevel } from '../../src/observe/log.js';
import { createMetricsRegistry } from '../../src/observe/metrics.js';
import { storeMetrics } from '../../src/observe/store-metrics.js';
import { startServer, type RunningServer } from '../../src/server.js';
import { createTodoService } from '../../src/todo/service.js';
import { performance } from 'node:perf_hooks';
import type { TrustedProxies } from '../../src/features/rate-limits/client-address.js';
import type { WhenLimiterDown } from '../../src/features/rate-limits/gate.js';
import { inProcessLimiter, type RateLimiter } from '../../src/rate-limits/limiter.js';
import type { RateLimits } from '../../src/rate-limits/policy.js';

export interface TestServerOptions {
  readonly service: 'todo' | 'bank';
  readonly errors?: ErrorFormat['name'];
  readonly catchAll?: boolean;
  readonly db?: DbSpec;
  readonly accounts?: ReadonlyMap<string, number>;
  /** Collects log lines instead of printing them. */
  readonly logLines?: string[];
  /** With logLines: the level they are collected at (info by default). */
  readonly logLevel?: LogLevel;
  /** One line per request (on by default, as shipped). */
  readonly accessLog?: boolean;
  /** GET /metrics and the metrics behind it (off by default). */
  readonly metrics?: boolean;
  readonly idempotency?: IdempotencyPolicy;
  readonly cors?: CorsPolicy;
  /** Cross-origin protection without CORS (it is on whenever `cors` is set). */
  readonly crossOriginProtection?: boolean;
  /** To-do service: --require-if-match. */
  readonly requireIfMatch?: boolean;
  /** The request deadline (none by default here; the CLI's default is 15 s). */
  readonly deadlineMs?: number;
  /** Load shedding's thresholds (off by default). */
  readonly shedding?: SheddingPolicy;
  /** Rate limits: in process on the real clock unless a limiter is given. */
  readonly rateLimiting?: {
    readonly limits: RateLimits;
    readonly limiter?: RateLimiter;
    readonly whenDown?: WhenLimiterDown;
    readonly trustedProxies?: TrustedProxies;
  };
}

export async function startTestServer(options: TestServerOptions): Promise<RunningServer> {
  const errorFormat: ErrorFormat = {
    name: options.errors ?? 'default',
    catchAll: options.catchAll ?? false,
  };
  const db = options.db ?? { kind: 'memory' };
  const metrics = options.metrics === true ? createMetricsRegistry() : undefined;
  const storeOptions = {
    observer: metrics === undefined ? undefined : storeMetrics(options.service, metrics),
    idempotencyTtlMs: options.idempotency?.ttlMs,
  };
  const service =
    options.service === 'todo'
      ? await createTodoService(db, storeOptions, { requireIfMatch: options.requireIfMatch })
      : await createBankService(
          db,
          options.accounts ?? INITIAL_ACCOUNTS,
          errorFormat,
          storeOptions,
        );
  const lines = options.logLines;
  const log: Logger =
    lines === undefined
      ? createLogger('silent')
      : createLogger(options.logLevel ?? 'info', (line) => lines.push(line));
  return startServer(service, {
    host: '127.0.0.1',
    port: 0,
    errorFormat,
    log: log.child({ service: options.service }),
    service: options.service,
    accessLog: options.accessLog,
    metrics,
    idempotency: options.idempotency,
    cors: options.cors,
    crossOriginProtection: options.crossOriginProtection,
    deadlineMs: options.deadlineMs,
    shedding: options.shedding,
    rateLimiting:
      options.rateLimiting === undefined
        ? undefined
        : {
            limits: options.rateLimiting.limits,
            limiter:
              options.rateLimiting.limiter ??
              inProcessLimiter(options.rateLimiting.limits, () => performance.now()),
            whenDown: options.rateLimiting.whenDown ?? 'open',
            trustedProxies: options.rateLimiting.trustedProxies,
          },
  });
}

/** Runs `body` against a fresh server, and closes the server whatever happens. */
export async function withServer(
  options: TestServerOptions,
  body: (url: string) => Promise<void>,
): Promise<void> {
  const server = await startTestServer(options);
  try {
    await body(server.url);
  } finally {
    await server.close();
  }
}
