// /metrics on an address of its own (--metrics-listen), for an operator who wants the API port to
// serve only the API: the metrics port can then stay on a private interface or behind a firewall
// rule, apart from the public one. It answers GET (and HEAD) /metrics and 404 for anything else;
// it writes no access line (a scrape every few seconds would drown the requests' lines).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';

export interface MetricsListener {
  readonly url: string;
  close(): Promise<void>;
}

export async function listenForMetrics(
  registry: Registry,
  host: string,
  port: number,
): Promise<MetricsListener> {
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path !== '/metrics' || (req.method !== 'GET' && req.method !== 'HEAD')) {
      res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' }).end('Not Found');
      return;
    }
    registry.metrics().then(
      (text) =>
        res
          .writeHead(200, { 'Content-Type': registry.contentType })
          .end(req.method === 'HEAD' ? undefined : text),
      () =>
        res
          .writeHead(500, { 'Content-Type': 'text/plain; charset=utf-8' })
          .end('Internal Server Error'),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const bound = (server.address() as AddressInfo).port;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${bound}/metrics`,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
