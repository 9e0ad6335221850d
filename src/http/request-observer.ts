// What the pipeline reports about each request once it is answered: one access line (at info) and
// the request metrics. The line holds the method, the path without its query (a query may carry a
// token), the route template, the status, the duration, the response bytes and the request id:
// never a body, and no header value but the request id.
import type { Logger } from '../log.js';
import type { RequestMetrics } from './request-metrics.js';

export interface RequestObserverOptions {
  /** Lines go here; the service's name is bound to it once, not written per request. */
  readonly log: Logger;
  readonly accessLog: boolean;
  readonly metrics?: RequestMetrics;
}

export class RequestObserver {
  private readonly log: Logger;
  private readonly accessLog: boolean;
  private readonly metrics: RequestMetrics | undefined;

  constructor(options: RequestObserverOptions) {
    this.log = options.log;
    // --log-level warn silences the access line as it does every other info line.
    this.accessLog = options.accessLog && options.log.infoEnabled;
    this.metrics = options.metrics;
  }

  started(): void {
    this.metrics?.started();
  }

  /** `startedMs` is performance.now() when the request arrived. */
  finished(method: string, target: string, route: string, status: number, bytes: number, requestId: string, startedMs: number): void {
    const durationMs = performance.now() - startedMs;
    this.metrics?.finished(method, route, status, durationMs / 1000);
    if (!this.accessLog) return;
    const queryAt = target.indexOf('?');
    const path = queryAt === -1 ? target : target.slice(0, queryAt);
    // The line info('request', { requestId, method, path, route, status, durationMs, bytes }) writes,
    // with the members written here (see Logger.infoJson). Numbers are integers or a finite duration.
    this.log.infoJson(
      'request',
      `,"requestId":${JSON.stringify(requestId)},"method":${JSON.stringify(method)},"path":${JSON.stringify(path)},"route":${JSON.stringify(route)}` +
        `,"status":${status},"durationMs":${Math.round(durationMs * 1000) / 1000},"bytes":${bytes}`,
    );
  }
}
