// One OTLP/HTTP export: a POST of an encoded request to the collector's traces URL, and what its
// answer means for the queue (export-queue.ts). A 2xx is delivered. 429, 502, 503 and 504 are the
// collector asking to wait: its Retry-After (seconds or a date, at most RETRY_AFTER_MAX_MS) says
// how long, when it says. Anything else (another status, no answer in time, no connection) is a
// failure. The answer's body is read and dropped (at most RESPONSE_BYTES_MAX of it).
import {
  request as httpRequest,
  Agent as HttpAgent,
  type ClientRequest,
  type IncomingMessage,
} from 'node:http';
import { request as httpsRequest, Agent as HttpsAgent } from 'node:https';

/** The longest wait a collector's Retry-After is taken for: past it, an answer asks too much of our queue. */
export const RETRY_AFTER_MAX_MS = 300_000;
/** A collector's answer is a small message (a partial success at most): more is not read. */
const RESPONSE_BYTES_MAX = 64 * 1024;
const WAIT_STATUSES: ReadonlySet<number> = new Set([429, 502, 503, 504]);
const USER_AGENT = 'status-services-otlp/1 (Node.js)';

export type ExportAnswer =
  | { readonly kind: 'delivered' }
  /** The collector asks to wait: `retryAfterMs` when it said how long. */
  | { readonly kind: 'wait'; readonly status: number; readonly retryAfterMs: number | undefined }
  | { readonly kind: 'failed'; readonly reason: string };

export interface OtlpTarget {
  readonly url: string;
  readonly contentType: 'application/x-protobuf' | 'application/json';
  readonly headers: Readonly<Record<string, string>>;
  /** One export's limit, from its start (the connection included) to the answer's end: past it the request is given up, a failure. */
  readonly timeoutMs: number;
}

export interface OtlpSender {
  send(body: Uint8Array): Promise<ExportAnswer>;
  close(): void;
}

export function otlpSender(target: OtlpTarget): OtlpSender {
  const url = new URL(target.url);
  const secure = url.protocol === 'https:';
  // One connection, kept open between exports: one export is out at a time.
  const agent = secure
    ? new HttpsAgent({ keepAlive: true, maxSockets: 1 })
    : new HttpAgent({ keepAlive: true, maxSockets: 1 });
  const request = secure ? httpsRequest : httpRequest;
  return {
    send: (body) =>
      new Promise((resolve) => {
        let settled = false;
        const settle = (answer: ExportAnswer): void => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          resolve(answer);
        };
        let req: ClientRequest;
        try {
          req = request(url, {
            method: 'POST',
            agent,
            headers: {
              ...target.headers,
              'content-type': target.contentType,
              'content-length': String(body.length),
              'user-agent': USER_AGENT,
            },
          });
        } catch (error) {
          // A header node:http refuses: this export fails, and the exporting thread lives on.
          resolve({
            kind: 'failed',
            reason: error instanceof Error ? error.message : String(error),
          });
          return;
        }
        // One timer for the whole export, from its start (the connection included) to the
        // answer's last byte: a collector that trickles its answer (each byte within a socket's
        // idle timeout) is given up as surely as one that says nothing.
        const timer = setTimeout(() => {
          settle({ kind: 'failed', reason: `no answer within ${target.timeoutMs} ms` });
          req.destroy();
        }, target.timeoutMs);
        req.on('error', (error) => settle({ kind: 'failed', reason: error.message }));
        req.on('response', (res) => readAnswer(res, settle));
        req.end(body);
      }),
    close: () => agent.destroy(),
  };
}

function readAnswer(res: IncomingMessage, settle: (answer: ExportAnswer) => void): void {
  const status = res.statusCode ?? 0;
  let read = 0;
  res.on('data', (chunk: Buffer) => {
    read += chunk.length;
    if (read > RESPONSE_BYTES_MAX) res.destroy();
  });
  res.on('error', () => undefined);
  res.on('close', () => {
    if (status >= 200 && status < 300) settle({ kind: 'delivered' });
    else if (WAIT_STATUSES.has(status))
      settle({ kind: 'wait', status, retryAfterMs: retryAfterMs(res.headers['retry-after']) });
    else settle({ kind: 'failed', reason: `the collector answered ${status}` });
  });
}

/** Retry-After (RFC 9110 §10.2.3): delay-seconds or an HTTP date; undefined when absent or unreadable. */
export function retryAfterMs(header: string | undefined, nowMs = Date.now()): number | undefined {
  if (header === undefined) return undefined;
  const text = header.trim();
  const ms = /^\d+$/.test(text) ? Number(text) * 1000 : Date.parse(text) - nowMs;
  if (Number.isNaN(ms)) return undefined;
  return Math.min(Math.max(ms, 0), RETRY_AFTER_MAX_MS);
}
