// What the pipeline reports about each request once it is answered: one access line (at info) and
// the request metrics. The line holds the method, the path without its query (a query may carry a
// token), the route template, the status, the duration, the response bytes and the request id:
// never a body, and no header value but the request id.
import { jsonString, type Logger } from '../log.js';
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
      `,"requestId":${jsonString(requestId)},"method":${jsonString(method)},"path":${jsonString(path)},"route":${jsonString(route)}` +
        `,"status":${status},"durationMs":${millisecondsText(durationMs)},"bytes":${bytes}`,
    );
  }
}

/** The decimal part of a duration by its microseconds: '' for none, then '.001' … '.999' without trailing zeros. */
const FRACTIONS: readonly string[] = Array.from({ length: 1000 }, (_, us) => (us === 0 ? '' : `.${String(us).padStart(3, '0').replace(/0+$/, '')}`));

/** The longest duration written from integers: about 35 minutes, far inside a double's exact digits. */
const MICROSECONDS_FAST_MAX = 0x7fffffff;

/**
 * `String(Math.round(ms * 1000) / 1000)`, the duration to the microsecond as JavaScript writes it,
 * but from integers: V8 takes about 0.15 µs to write a fraction, and a tenth of that for this.
 */
export function millisecondsText(ms: number): string {
  const us = Math.round(ms * 1000);
  if (!(us >= 0 && us <= MICROSECONDS_FAST_MAX)) return String(us / 1000);
  return `${Math.floor(us / 1000)}${FRACTIONS[us % 1000] as string}`;
}
