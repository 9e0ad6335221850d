// Real servers for tests: each test starts its own, on a free port, and closes it. A server's
// features are joined as the command line joins them (src/features/feature.ts), from settings made
// here: a test can hand in what no option can (a limiter on a clock of its own).
import { INITIAL_ACCOUNTS } from '../../src/bank/model.js';
import { createBankService } from '../../src/bank/service.js';
import type { DbSpec } from '../../src/config.js';
import type { CorsPolicy } from '../../src/features/cors/cors.js';
import { cors } from '../../src/features/cors/feature.js';
import { crossOrigin } from '../../src/features/cross-origin/feature.js';
import { deadlines } from '../../src/features/deadlines/feature.js';
import { featureOn, joinAll, storeHooksOf, type FeatureOn } from '../../src/features/feature.js';
import {
  DEFAULT_IDEMPOTENCY_TTL_MS,
  type IdempotencyPolicy,
} from '../../src/features/idempotency/gate.js';
import { idempotency } from '../../src/features/idempotency/feature.js';
import type { Deprecation } from '../../src/features/lifecycle/deprecations.js';
import { lifecycle } from '../../src/features/lifecycle/feature.js';
import { rateLimits } from '../../src/features/rate-limits/feature.js';
import { tracing } from '../../src/features/tracing/feature.js';
import type { TracingConfig } from '../../src/features/tracing/options.js';
import type { SheddingPolicy } from '../../src/features/shedding/load-shedding.js';
import { shedding } from '../../src/features/shedding/feature.js';
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
  readonly idempotency?: Omit<IdempotencyPolicy, 'keepRan'>;
  readonly cors?: CorsPolicy;
  /** Cross-origin protection: on by default, as shipped. */
  readonly crossOriginProtection?: boolean;
  /** To-do service: --require-if-match. */
  readonly requireIfMatch?: boolean;
  /** The request deadline (none by default here; the CLI's default is 15 s). */
  readonly deadlineMs?: number;
  /** Tracing (off by default): its settings, as options.ts reads them. */
  readonly tracing?: TracingConfig;
  /** Operations deprecated (--deprecate; none by default). */
  readonly deprecations?: readonly Deprecation[];
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

/** The features on, with their settings, in the list's order (src/features/features.ts). */
export function testFeatures(options: Omit<TestServerOptions, 'service'>): FeatureOn[] {
  const limiting = options.rateLimiting;
  const features: (FeatureOn | undefined)[] = [
    options.tracing === undefined ? undefined : featureOn(tracing, options.tracing),
    options.cors === undefined ? undefined : featureOn(cors, options.cors),
    options.crossOriginProtection === false
      ? undefined
      : featureOn(crossOrigin, { trusted: options.cors?.origins ?? new Set() }),
    options.deprecations === undefined ? undefined : featureOn(lifecycle, options.deprecations),
    options.shedding === undefined ? undefined : featureOn(shedding, options.shedding),
    featureOn(idempotency, {
      required: false,
      ttlMs: DEFAULT_IDEMPOTENCY_TTL_MS,
      ...options.idempotency,
      keepRan: limiting !== undefined,
    }),
    limiting === undefined
      ? undefined
      : featureOn(rateLimits, {
          limits: limiting.limits,
          limiter: limiting.limiter ?? inProcessLimiter(limiting.limits, () => performance.now()),
          whenDown: limiting.whenDown ?? 'open',
          trustedProxies: limiting.trustedProxies,
        }),
    (options.deadlineMs ?? 0) > 0 ? featureOn(deadlines, options.deadlineMs as number) : undefined,
  ];
  return features.filter((feature): feature is FeatureOn => feature !== undefined);
}

export async function startTestServer(options: TestServerOptions): Promise<RunningServer> {
  const errorFormat: ErrorFormat = {
    name: options.errors ?? 'default',
    catchAll: options.catchAll ?? false,
  };
  const db = options.db ?? { kind: 'memory' };
  const metrics = options.metrics === true ? createMetricsRegistry() : undefined;
  const lines = options.logLines;
  const log: Logger = (
    lines === undefined
      ? createLogger('silent')
      : createLogger(options.logLevel ?? 'info', (line) => lines.push(line))
  ).child({ service: options.service });
  const joined = await joinAll(testFeatures(options), {
    service: options.service,
    db,
    pooler: undefined,
    errorFormat,
    log,
    metrics,
  });
  const storeOptions = storeHooksOf(
    joined,
    metrics === undefined ? undefined : storeMetrics(options.service, metrics),
  );
  const service =
    options.service === 'todo'
      ? await createTodoService(db, storeOptions, { requireIfMatch: options.requireIfMatch })
      : await createBankService(
          db,
          options.accounts ?? INITIAL_ACCOUNTS,
          errorFormat,
          storeOptions,
        );
  return startServer(service, {
    host: '127.0.0.1',
    port: 0,
    errorFormat,
    log,
    service: options.service,
    accessLog: options.accessLog,
    metrics,
    features: joined,
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
