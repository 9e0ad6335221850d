// One HTTP server for one service: its routes, the docs, the health checks, the metrics, and a
// shutdown that stops accepting, lets in-flight requests finish and then closes the store.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';
import { createRequestHandler } from './http/app.js';
import { pipelineStages } from './http/stages/pipeline-stages.js';
import type { PlacedStage } from './http/stages/stage.js';
import {
  connectionsMaxFor,
  connectionsPerClientFor,
  guardConnections,
  SILENT_MS,
} from './http/connections/connection-guard.js';
import type { BodyLimits } from './http/body.js';
import { docsRoutes } from './http/documents/docs.js';
import { serviceUnavailable } from './http/errors.js';
import { metricsRoute } from './http/metrics-route.js';
import type { ErrorFormat } from './http/render.js';
import { RequestMetrics } from './http/request-metrics.js';
import { RequestObserver } from './http/request-observer.js';
import { defineRoute, type Route } from './http/route.js';
import { assertRouteTable } from './http/route-table.js';
import type { ServiceDefinition } from './http/service.js';
import type { Logger } from './observe/log.js';
import { errorForStoreFault } from './store-fault-responses.js';
import { listenForMetrics } from './observe/metrics-listener.js';
import { respondToParserErrors } from './http/connections/parser-responses.js';
import type { Joined } from './features/feature.js';

export const BODY_LIMITS: BodyLimits = { bodyBytesMax: 1024 * 1024, nestingDepthMax: 512 };
const SHUTDOWN_GRACE_MS = 10_000;
/**
 * Node's own limits on a connection; the shortest one bounds how long a dead connection lingers.
 * Node checks the header and request limits every connectionsCheckingInterval (30 s by default),
 * which let a slow client hold its connection for up to 40 s; checked every second, it holds 10–11
 * s.
 */
export const CONNECTION_TIMEOUTS = {
  requestTimeout: 30_000,
  headersTimeout: 10_000,
  keepAliveTimeout: 5_000,
  connectionsCheckingInterval: 1_000,
} as const;

export interface ServerOptions {
  readonly host: string;
  readonly port: number;
  readonly errorFormat: ErrorFormat;
  /** The service's logger: every line of this server, the access lines too, goes here. */
  readonly log: Logger;
  /** One info line per request (default on). */
  readonly accessLog?: boolean;
  /** The service's metrics registry: request metrics join it and GET /metrics serves it. None: no /metrics. */
  readonly metrics?: Registry;
  /** The service's short name (todo, bank): its label in the metrics. */
  readonly service: string;
  /** Client connections open at once; by default all the open-file limit allows one server. */
  readonly connectionsMax?: number;
  /** Connections one client address may hold at once; 0: no bound of its own; by default a quarter of connectionsMax. */
  readonly connectionsPerClient?: number;
  /** With metrics: serve /metrics on this address instead of the API's (metrics-listener.ts). */
  readonly metricsListen?: { readonly host: string; readonly port: number };
  /**
   * The features joined to the service (src/features/feature.ts), in the list's order: their stages
   * answer and are documented; what they hold is let go once the service stopped.
   */
  readonly features?: readonly Joined[];
}

export interface ShutdownReport {
  /** True when the grace period ran out and connections still open were cut. */
  readonly connectionsCut: boolean;
}

export interface RunningServer {
  readonly url: string;
  readonly port: number;
  /** Where /metrics is served when it has an address of its own. */
  readonly metricsUrl?: string;
  /** Stops accepting, waits for in-flight requests (up to a grace period), closes the store. */
  close(): Promise<ShutdownReport>;
}

function healthRoutes(service: ServiceDefinition): Route[] {
  const hidden = (name: string) => ({ name, hidden: true });
  return [
    defineRoute({
      method: 'GET',
      path: '/healthz',
      status: 200,
      params: {},
      docs: hidden('healthz'),
      handle: () => ({ status: 200, body: '{"status":"ok"}' }),
    }),
    defineRoute({
      method: 'GET',
      path: '/readyz',
      status: 200,
      params: {},
      docs: hidden('readyz'),
      async handle() {
        if (!(await service.ready())) throw serviceUnavailable();
        return { status: 200, body: '{"status":"ready"}' };
      },
    }),
  ];
}

function docsFor(
  service: ServiceDefinition,
  options: ServerOptions,
  stages: readonly PlacedStage[],
): Route[] {
  // The documents are drawn from the same stages as the pipeline that answers (stage.ts).
  return docsRoutes({
    title: service.title,
    version: service.version,
    routes: service.routes,
    components: service.components,
    errorFormat: options.errorFormat,
    stages: pipelineStages({
      routes: service.routes,
      errorFormat: options.errorFormat,
      limits: BODY_LIMITS,
      stages,
    }).stages,
  });
}

export async function startServer(
  service: ServiceDefinition,
  options: ServerOptions,
): Promise<RunningServer> {
  const registry = options.metrics;
  const features = options.features ?? [];
  const stages = features.flatMap((joined) => joined.stages(service.routes));
  const docs = docsFor(service, options, stages);
  const shutdownState = { started: false };
  const metricsOnApi = registry !== undefined && options.metricsListen === undefined;
  const operational = [...healthRoutes(service), ...(metricsOnApi ? [metricsRoute(registry)] : [])];
  assertRouteTable({ service: service.routes, builtIn: [...docs, ...operational] });
  const observer = new RequestObserver({
    log: options.log,
    accessLog: options.accessLog ?? true,
    metrics: registry === undefined ? undefined : new RequestMetrics(options.service, registry),
  });
  const routes = [...docs, ...service.routes, ...operational];
  const pipeline = pipelineStages({
    routes,
    errorFormat: options.errorFormat,
    limits: BODY_LIMITS,
    stages,
  });
  const handler = createRequestHandler({
    errorFormat: options.errorFormat,
    log: options.log,
    observer,
    shutdown: shutdownState,
    translateError: errorForStoreFault,
    pipeline,
  });
  const server = createServer(CONNECTION_TIMEOUTS, handler);
  respondToParserErrors(server, {
    errorFormat: options.errorFormat,
    observer,
    warn: (message, fields) => options.log.warn(message, fields),
    stages: pipeline.stages,
  });
  const connectionsMax = options.connectionsMax ?? connectionsMaxFor(1);
  guardConnections(server, {
    connectionsMax,
    connectionsPerClient: options.connectionsPerClient ?? connectionsPerClientFor(connectionsMax),
    unboundedPeers: features.flatMap((joined) => joined.sharedPeers ?? []),
    silentMs: SILENT_MS,
    warn: (message, fields) => options.log.warn(message, fields),
  });
  const backlogs = features.flatMap((joined) => joined.backlog ?? []);
  await listen(
    server,
    options.host,
    options.port,
    backlogs.length === 0 ? undefined : Math.max(...backlogs),
  );
  const metricsListener =
    registry === undefined || options.metricsListen === undefined
      ? undefined
      : await listenForMetrics(
          registry,
          options.metricsListen.host,
          options.metricsListen.port,
        ).catch(async (error: unknown) => {
          await new Promise((resolve) => server.close(resolve));
          throw error;
        });
  const port = (server.address() as AddressInfo).port;
  const host = options.host.includes(':') ? `[${options.host}]` : options.host;
  let closing: Promise<ShutdownReport> | undefined;
  return {
    url: `http://${host}:${port}`,
    port,
    metricsUrl: metricsListener?.url,
    close: () => {
      shutdownState.started = true;
      return (closing ??= shutdown(server, service, options.log).finally(() =>
        Promise.all([metricsListener?.close(), ...features.map((joined) => joined.close?.())]),
      ));
    },
  };
}

function listen(
  server: Server,
  host: string,
  port: number,
  backlog: number | undefined,
): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port, host, backlog }, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

// Idle kept-alive connections are closed at once; busy ones answer with `Connection: close` (see
// app.ts) and end with their response, so the wait is for requests in flight, not for idle clients.
async function shutdown(
  server: Server,
  service: ServiceDefinition,
  log: Logger,
): Promise<ShutdownReport> {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeIdleConnections();
  let connectionsCut = false;
  const grace = setTimeout(() => {
    connectionsCut = true;
    log.warn('shutdown grace period over: cutting the connections still open', {
      graceMs: SHUTDOWN_GRACE_MS,
    });
    server.closeAllConnections();
  }, SHUTDOWN_GRACE_MS);
  await closed;
  clearTimeout(grace);
  await service.close();
  return { connectionsCut };
}
