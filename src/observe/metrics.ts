// The metrics registry of one service: the process metrics (event-loop lag, heap, RSS, GC, open
// file descriptors, …) from prom-client's defaults, then whatever the store and the HTTP server
// register into it. One registry per service, so that each service's /metrics is complete alone.
import { collectDefaultMetrics, Registry } from 'prom-client';

/**
 * prom-client's defaults include three gauges named `…_total`, which Prometheus reserves for
 * counters (`promtool check metrics` rejects them); the same values stay under the names without
 * it.
 */
const MISNAMED_DEFAULTS = [
  'nodejs_active_handles_total',
  'nodejs_active_requests_total',
  'nodejs_active_resources_total',
];

export function createMetricsRegistry(): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  for (const name of MISNAMED_DEFAULTS) registry.removeSingleMetric(name);
  return registry;
}
