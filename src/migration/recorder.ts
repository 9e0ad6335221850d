// The recording proxy: a reverse proxy in front of the service (the target) that passes every
// exchange through as it comes and records it into a HAR, so that a team captures its service's
// real traffic to replay later. Bounded: at most RECORD_CONNECTIONS_MAX connections at once, each
// body kept up to `bodyMax` bytes (past it, recorded truncated and flagged), and the entries not
// yet written flushed every `flushEveryMs` and whenever they pass PENDING_BYTES_MAX, so that
// memory stays under about RECORD_CONNECTIONS_MAX × 2 × bodyMax + PENDING_BYTES_MAX.
import {
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type OutgoingHttpHeaders,
  type ServerResponse,
} from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { HarEntry, HarHeader } from './har.js';
import { HarFileWriter } from './har-writer.js';
import { RecordedBody } from './recorded-body.js';
import { redactedValue } from './redact.js';

export const RECORD_CONNECTIONS_MAX = 64;
export const PENDING_BYTES_MAX = 8 * 1024 * 1024;
export const BODY_MAX_DEFAULT = 1024 * 1024;
const STOP_GRACE_MS = 10_000;

export interface RecorderOptions {
  readonly target: string;
  readonly host: string;
  readonly port: number;
  readonly har: string;
  readonly keepSecrets: boolean;
  readonly bodyMax: number;
  readonly flushEveryMs: number;
  /** Where the recorder says what went wrong (a failed write); one line each. */
  readonly warn: (line: string) => void;
}

export interface Recorder {
  readonly url: string;
  /** Stops taking connections, lets the exchanges in flight end, writes the HAR; resolves with the count written. */
  stop(): Promise<{ readonly written: number; readonly lost: number }>;
}

/** Headers of one hop, which a proxy does not pass on. */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
]);

function pairs(raw: readonly string[]): HarHeader[] {
  const out: HarHeader[] = [];
  for (let at = 0; at + 1 < raw.length; at += 2)
    out.push({ name: raw[at] as string, value: raw[at + 1] as string });
  return out;
}

function passedOn(headers: readonly HarHeader[], skip: ReadonlySet<string>): OutgoingHttpHeaders {
  const out: Record<string, string | string[]> = {};
  for (const { name, value } of headers) {
    if (skip.has(name.toLowerCase())) continue;
    const earlier = out[name];
    out[name] = earlier === undefined ? value : [earlier, value].flat();
  }
  return out;
}

interface Exchange {
  readonly started: Date;
  readonly url: string;
  readonly request: IncomingMessage;
  readonly requestBody: RecordedBody;
  response: IncomingMessage | undefined;
  readonly responseBody: RecordedBody;
  firstByteAt: number | undefined;
  failure: string | undefined;
}

function mimeOf(headers: readonly HarHeader[]): string {
  return headers.find((h) => h.name.toLowerCase() === 'content-type')?.value ?? '';
}

function entryOf(exchange: Exchange, keepSecrets: boolean): HarEntry {
  const shown = (raw: readonly string[]): HarHeader[] =>
    pairs(raw).map(({ name, value }) => ({
      name,
      value: keepSecrets ? value : redactedValue(name, value),
    }));
  const requestHeaders = shown(exchange.request.rawHeaders);
  const responseHeaders = shown(exchange.response?.rawHeaders ?? []);
  const now = Date.now();
  const started = exchange.started.getTime();
  const wait = (exchange.firstByteAt ?? now) - started;
  const requestText = exchange.requestBody.text();
  const responseText = exchange.responseBody.text();
  const url = new URL(exchange.url);
  return {
    startedDateTime: exchange.started.toISOString(),
    time: now - started,
    request: {
      method: exchange.request.method ?? 'GET',
      url: exchange.url,
      httpVersion: `HTTP/${exchange.request.httpVersion}`,
      cookies: [],
      headers: requestHeaders,
      queryString: [...url.searchParams].map(([name, value]) => ({ name, value })),
      ...(exchange.requestBody.length === 0
        ? {}
        : {
            postData: {
              mimeType: mimeOf(requestHeaders),
              text: requestText.text,
              ...(requestText.base64 ? { _encoding: 'base64' } : {}),
              ...(exchange.requestBody.truncated ? { _truncated: true } : {}),
            },
          }),
      headersSize: -1,
      bodySize: exchange.requestBody.length,
    },
    response: {
      status: exchange.response?.statusCode ?? 0,
      statusText: exchange.response?.statusMessage ?? '',
      httpVersion: `HTTP/${exchange.response?.httpVersion ?? '1.1'}`,
      cookies: [],
      headers: responseHeaders,
      content: {
        size: exchange.responseBody.length,
        mimeType: mimeOf(responseHeaders),
        ...(exchange.responseBody.length === 0 ? {} : { text: responseText.text }),
        ...(responseText.base64 && exchange.responseBody.length > 0 ? { encoding: 'base64' } : {}),
        ...(exchange.responseBody.truncated ? { _truncated: true } : {}),
      },
      redirectURL: exchange.response?.headers.location ?? '',
      headersSize: -1,
      bodySize: exchange.responseBody.length,
      ...(exchange.failure === undefined ? {} : { comment: exchange.failure }),
    },
    cache: {},
    timings: { send: 0, wait, receive: now - started - wait },
  };
}

export async function startRecorder(options: RecorderOptions): Promise<Recorder> {
  const target = new URL(options.target);
  const prefix = target.pathname.replace(/\/$/, '');
  const requester = target.protocol === 'https:' ? httpsRequest : httpRequest;
  const writer = await HarFileWriter.create(options.har, 'status-services migration kit', '1');
  const inFlight = new Set<Promise<void>>();
  const flush = async (): Promise<void> => {
    const error = await writer.flush();
    if (error !== undefined)
      options.warn(`could not write to ${options.har}, entries lost: ${error.message}`);
  };
  const record = (exchange: Exchange): void => {
    writer.add(entryOf(exchange, options.keepSecrets));
    if (writer.bytesPending >= PENDING_BYTES_MAX) void flush();
  };

  function proxy(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const exchange: Exchange = {
      started: new Date(),
      url: `${target.origin}${prefix}${request.url ?? '/'}`,
      request,
      requestBody: new RecordedBody(options.bodyMax),
      response: undefined,
      responseBody: new RecordedBody(options.bodyMax),
      firstByteAt: undefined,
      failure: undefined,
    };
    return new Promise<void>((resolve) => {
      let ended = false;
      const end = (failure?: string): void => {
        if (ended) return;
        ended = true;
        exchange.failure = failure;
        record(exchange);
        resolve();
      };
      const upstream = requester({
        host: target.hostname,
        port: target.port,
        method: request.method,
        path: `${prefix}${request.url ?? '/'}`,
        headers: {
          ...passedOn(pairs(request.rawHeaders), new Set([...HOP_BY_HOP, 'host'])),
          host: target.host,
        },
        agent: false,
      });
      request.on('data', (chunk: Buffer) => exchange.requestBody.add(chunk));
      request.pipe(upstream);
      upstream.on('response', (answer) => {
        exchange.response = answer;
        exchange.firstByteAt = Date.now();
        response.writeHead(
          answer.statusCode ?? 502,
          answer.statusMessage,
          passedOn(pairs(answer.rawHeaders), HOP_BY_HOP),
        );
        answer.on('data', (chunk: Buffer) => exchange.responseBody.add(chunk));
        answer.pipe(response);
        answer.on('end', () => end());
        answer.on('error', (error) => end(`the answer broke off: ${error.message}`));
      });
      upstream.on('error', (error) => {
        if (!response.headersSent) {
          response.writeHead(502, { 'content-type': 'text/plain; charset=utf-8' });
          response.end('Bad Gateway: the recorded service did not answer\n');
        } else response.destroy();
        end(`no answer from the target: ${error.message}`);
      });
      response.on('close', () => {
        if (!response.writableFinished) {
          upstream.destroy();
          end('the client went away before the answer ended');
        }
      });
    });
  }

  const server = createServer((request, response) => {
    const done = proxy(request, response);
    inFlight.add(done);
    void done.then(() => inFlight.delete(done));
  });
  server.maxConnections = RECORD_CONNECTIONS_MAX;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const timer = setInterval(() => void flush(), options.flushEveryMs);
  const { port } = server.address() as AddressInfo;
  const host = options.host.includes(':') ? `[${options.host}]` : options.host;
  return {
    url: `http://${host}:${port}`,
    async stop() {
      clearInterval(timer);
      server.close();
      server.closeIdleConnections();
      const grace = setTimeout(() => server.closeAllConnections(), STOP_GRACE_MS);
      await Promise.all(inFlight);
      clearTimeout(grace);
      server.closeAllConnections();
      const error = await writer.close();
      if (error !== undefined)
        options.warn(`could not write to ${options.har}, entries lost: ${error.message}`);
      return { written: writer.entriesWritten, lost: writer.entriesLost };
    },
  };
}
