// GET /metrics: the registry in the Prometheus text format. Like /healthz it is not an operation of
// the service, so it stays out of the OpenAPI document and /docs.
import type { Registry } from 'prom-client';
import { defineRoute, type Route } from './route.js';

export function metricsRoute(registry: Registry): Route {
  return defineRoute({
    method: 'GET',
    path: '/metrics',
    status: 200,
    params: {},
    docs: { name: 'metrics', hidden: true },
    async handle() {
      return { status: 200, body: await registry.metrics(), contentType: registry.contentType };
    },
  });
}
