// The counter of requests refused over their rate limit, by service and kind, in the service's
// /metrics: a flood shows there, not as a log line per refusal.
import { Counter, type Registry } from 'prom-client';
import type { RequestKind } from '../../rate-limits/policy.js';

export function rateLimitedCounter(
  service: string,
  registry: Registry,
): (kind: RequestKind) => void {
  const counter = new Counter<'service' | 'kind'>({
    name: 'http_requests_rate_limited_total',
    help: 'Requests answered 429 because their client was over its rate limit, by kind (reads, writes).',
    labelNames: ['service', 'kind'],
    registers: [registry],
  });
  const writes = counter.labels(service, 'writes');
  const reads = counter.labels(service, 'reads');
  // Both series exist from the start at 0, so that a rate over them is defined before the first
  // refusal.
  writes.inc(0);
  reads.inc(0);
  return (kind) => (kind === 'writes' ? writes : reads).inc();
}
