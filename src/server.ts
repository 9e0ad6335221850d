// One HTTP server for one service: its routes, the docs, the health checks, and a shutdown that
// stops accepting, lets in-flight requests finish and then closes the store.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequestHandler } from './http/app.js';
import type { BodyLimits } from './http/body.js';
import { docsRoutes } from './http/docs.js';
import { ServiceUnavailableError } from './http/errors.js';
import type { ErrorFormat } from './http/render.js';
import { defineRoute, type Route } from './http/route.js';
import type { ServiceDefinition } from './http/service.js';
import type { Logger } from './log.js';

export const BODY_LIMITS: BodyLimits = { bodyBytesMax: 1024 * 1024, nestingDepthMax: 512 };
const SHUTDOWN_GRACE_MS = 10_000;

export interface ServerOptions {
  readonly host: string;
  readonly port: number;
  readonly errorFormat: ErrorFormat;
  readonly log: Logger;
}

export interface RunningServer {
  readonly url: string;
  readonly port: number;
  /** Stops accepting, waits for in-flight requests (up to a grace period), closes the store. */
  close(): Promise<void>;
}

function healthRoutes(service: ServiceDefinition): Route[] {
  const hidden = (name: string) => ({ name, hidden: true });
  return [
    defineRoute({ method: 'GET', path: '/healthz', status: 200, params: {}, docs: hidden('healthz'), handle: () => ({ status: 200, body: '{"status":"ok"}' }) }),
    defineRoute({
      method: 'GET',
      path: '/readyz',
      status: 200,
      params: {},
      docs: hidden('readyz'),
      async handle() {
        if (!(await service.ready())) throw new ServiceUnavailableError();
        return { status: 200, body: '{"status":"ready"}' };
      },
    }),
  ];
}

export async function startServer(service: ServiceDefinition, options: ServerOptions): Promise<RunningServer> {
  const docs = docsRoutes({
    title: service.title,
    version: service.version,
    routes: service.routes,
    components: service.components,
    errorFormat: options.errorFormat,
  });
  const handler = createRequestHandler({
    routes: [...docs, ...service.routes, ...healthRoutes(service)],
    errorFormat: options.errorFormat,
    limits: BODY_LIMITS,
    log: options.log,
  });
  const server = createServer({ requestTimeout: 30_000, headersTimeout: 10_000, keepAliveTimeout: 5_000 }, handler);
  await listen(server, options.host, options.port);
  const port = (server.address() as AddressInfo).port;
  const host = options.host.includes(':') ? `[${options.host}]` : options.host;
  let closing: Promise<void> | undefined;
  return {
    url: `http://${host}:${port}`,
    port,
    close: () => (closing ??= shutdown(server, service)),
  };
}

function listen(server: Server, host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

async function shutdown(server: Server, service: ServiceDefinition): Promise<void> {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeIdleConnections();
  const grace = setTimeout(() => server.closeAllConnections(), SHUTDOWN_GRACE_MS);
  await closed;
  clearTimeout(grace);
  await service.close();
}
