// The services with every option on at once, in every error format: the modes whose documents the
// OpenAPI tools must accept (test/http/openapi-lint.test.ts) and whose rules the document tests
// read (test/http/openapi-edge.test.ts).
import { parseCorsOrigins, type CorsPolicy } from '../../src/features/cors/cors.js';
import { DEFAULT_IDEMPOTENCY_TTL_MS } from '../../src/features/idempotency/gate.js';
import {
  parseTrustedProxies,
  type TrustedProxies,
} from '../../src/features/rate-limits/client-address.js';
import { readTracingConfig, type TracingConfig } from '../../src/features/tracing/options.js';
import type { TestServerOptions } from './server.js';

export const LISTED_ORIGIN = 'http://127.0.0.1:5173';

/** A collector nobody listens at: spans are dropped, which no document test minds. */
const TRACING = readTracingConfig('http://127.0.0.1:9', {}).tracing as TracingConfig;

function options(
  service: 'todo' | 'bank',
  proxyHeader: 'x-forwarded-for' | 'forwarded',
): TestServerOptions {
  return {
    service,
    cors: parseCorsOrigins(LISTED_ORIGIN) as CorsPolicy,
    crossOriginProtection: true,
    tracing: TRACING,
    rateLimiting: {
      limits: { writes: { perSecond: 10, burst: 20 }, reads: { perSecond: 100, burst: 200 } },
      trustedProxies: parseTrustedProxies('10.0.0.0/8', proxyHeader) as TrustedProxies,
    },
    idempotency: { required: true, ttlMs: DEFAULT_IDEMPOTENCY_TTL_MS },
    requireIfMatch: service === 'todo',
    deadlineMs: 15_000,
    shedding: { waitingMax: 1_000 },
    deprecations: [
      {
        method: 'GET',
        path: service === 'todo' ? '/v2/todos/{todo_id}' : '/accounts/{account}/limits',
        deprecatedAtMs: Date.UTC(2026, 0, 1),
        sunsetAtMs: Date.UTC(2027, 0, 1),
      },
    ],
  };
}

/** Each service in each error format, every option on. */
export const EVERY_OPTION_MODES: Readonly<Record<string, TestServerOptions>> = Object.fromEntries(
  (['todo', 'bank'] as const).flatMap((service): [string, TestServerOptions][] => [
    [
      `${service}-default-every-option`,
      { ...options(service, 'x-forwarded-for'), errors: 'default' },
    ],
    [`${service}-unified-every-option`, { ...options(service, 'forwarded'), errors: 'unified' }],
    [
      `${service}-catchall-every-option`,
      { ...options(service, 'x-forwarded-for'), errors: 'unified', catchAll: true },
    ],
    [`${service}-problem-every-option`, { ...options(service, 'forwarded'), errors: 'problem' }],
  ]),
);
