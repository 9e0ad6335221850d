// The responses node:http's parser gives before a request reaches the pipeline: a request line or a
// header it cannot read (400), headers past its size limit (431), chunk extensions past theirs
// (413), a request that did not arrive in time (408), an Expect other than 100-continue (417). By
// default Node writes them itself, bare: no request id, no body in the active format, no access
// line. Here each is written like any response of ours: X-Request-Id, the body in the active
// format, `Connection: close` (the stream cannot be read on after a parse error), the CORS headers
// of a listed origin, and an access line and its metrics, the lines bounded per second so that a
// flood of garbage cannot flood the log.
//
// A body the parser cannot read (a malformed chunk: a size that is not hex, data longer than its
// size, a chunk not ended by CRLF) fails after its request reached the pipeline; it is answered
// here all the same (400, or 413 for chunk extensions past their limit), as Node itself answers it,
// unless the pipeline's response has begun; the pipeline, whose read of the body then fails, stays
// silent.
import {
  STATUS_CODES,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import type { ErrorCode } from '../catalogue.js';
import { ApiError } from '../errors.js';
import { renderError, type ErrorFormat } from '../render.js';
import { randomUuid } from '../random-uuids.js';
import { REQUEST_ID_HEADER } from '../request-id.js';
import { UNMATCHED_ROUTE } from '../request-metrics.js';
import type { RequestObserver } from '../request-observer.js';
import type { Stage } from '../stages/stage.js';

/** The method label of a request the parser could not read: one series, whatever was sent. */
export const UNPARSED_METHOD = 'UNPARSED';
/** Access lines of parser answers written per second at most; the rest are counted in one warning. */
export const PARSER_LINES_PER_SECOND_MAX = 20;

interface Options {
  readonly errorFormat: ErrorFormat;
  readonly observer: RequestObserver;
  /** Where a second's untold answers are counted. */
  readonly warn: (message: string, fields: Record<string, unknown>) => void;
  /** The pipeline's stages: those that add headers to the parser's responses (CORS) do. */
  readonly stages: readonly Stage[];
}

/** Which parser failure gives which status, as Node's own responses do. */
function codeFor(error: Error): ErrorCode {
  switch ((error as { code?: unknown }).code) {
    case 'HPE_HEADER_OVERFLOW':
      return 'HTTP_431';
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return 'HTTP_413';
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return 'HTTP_408';
    default:
      return 'HTTP_400';
  }
}

const MESSAGES: Partial<Record<ErrorCode, string>> = {
  HTTP_400: 'Bad Request: the request line or a header could not be read',
};

/**
 * Sockets whose request, already in the pipeline, was answered here (a 408, or a body the parser
 * could not read): the pipeline must not report it again.
 */
export const respondedByParser = new WeakSet<Socket>();

/** How far into the bytes the parser failed on a header is looked for: the size of Node's header limit. */
const HEADER_SEARCH_BYTES_MAX = 16 * 1024;

/**
 * A header of a request the parser failed on (lower-case `name`), read from the bytes it failed on
 * (Node hands them with the error): the request was never parsed, so this is the only place it can
 * be found. A header block split over several packets may have it in an earlier one: undefined.
 */
export function headerInRawRequest(raw: unknown, name: string): string | undefined {
  if (!Buffer.isBuffer(raw)) return undefined;
  const line = new RegExp(`\\r\\n${name}:[ \\t]*([^\\r\\n]*?)[ \\t]*\\r\\n`, 'i');
  return line.exec(raw.subarray(0, HEADER_SEARCH_BYTES_MAX).toString('latin1'))?.[1];
}

/** A header list as lines of a raw response's head. */
const headLines = (headers: readonly string[]): string => {
  let lines = '';
  for (let i = 0; i < headers.length; i += 2)
    lines += `${headers[i] as string}: ${headers[i + 1] as string}\r\n`;
  return lines;
};

export function respondToParserErrors(server: Server, options: Options): void {
  const { errorFormat, observer, warn } = options;
  const adders = options.stages.filter((stage) => stage.parserHeaders !== undefined);
  /** What the stages add to a parser's response, from the request's headers or, unparsed, its bytes. */
  const addedBy = (headers: IncomingHttpHeaders | undefined, raw: unknown): string[] =>
    adders.flatMap((stage) => (stage.parserHeaders?.(headers, raw) ?? []) as string[]);
  let windowStartMs = 0;
  let linesInWindow = 0;
  let untold = 0;

  /** Reports a response: its metrics always, its access line while the second's budget lasts. */
  function report(
    method: string,
    target: string,
    status: number,
    bytes: number,
    id: string,
    startedMs: number,
  ): void {
    const nowMs = performance.now();
    if (nowMs - windowStartMs >= 1000) {
      if (untold > 0) warn('parser-level answers not logged one by one', { count: untold, status });
      windowStartMs = nowMs;
      linesInWindow = 0;
      untold = 0;
    }
    observer.started();
    if (linesInWindow < PARSER_LINES_PER_SECOND_MAX) {
      linesInWindow += 1;
      observer.finished(method, target, UNMATCHED_ROUTE, status, bytes, id, startedMs);
    } else {
      untold += 1;
      observer.finished(method, target, UNMATCHED_ROUTE, status, bytes, id, startedMs, false);
    }
  }

  function rendered(
    code: ErrorCode,
    added: readonly string[],
  ): { status: number; head: string; body: string; id: string } {
    const response = renderError(new ApiError(code, { message: MESSAGES[code] }), errorFormat);
    const id = randomUuid();
    const head =
      `HTTP/1.1 ${response.status} ${STATUS_CODES[response.status] ?? ''}\r\n` +
      `Content-Type: ${response.contentType}\r\nContent-Length: ${Buffer.byteLength(response.body)}\r\n${REQUEST_ID_HEADER}: ${id}\r\n` +
      `${headLines(added)}Connection: close\r\n\r\n`;
    return { status: response.status, head, body: response.body, id };
  }

  server.on('clientError', (error: Error, socket: Socket) => {
    const startedMs = performance.now();
    const code = codeFor(error);
    // A request the pipeline already has (its response object is on the socket) is the pipeline's
    // to report when its client left mid-body (a 499, no response). A time-out or a body the parser
    // cannot read is answered here, as Node would, and reported here, the pipeline told to stay
    // silent; unless the pipeline's response has begun, which nothing may then interrupt.
    const response = (
      socket as { _httpMessage?: { headersSent?: boolean; req?: IncomingMessage } | null }
    )._httpMessage;
    const held = response?.req;
    const errorCode = (error as { code?: unknown }).code;
    // A connection ended in the middle of a body (HPE_INVALID_EOF_STATE) is a client that left.
    if (
      errorCode === 'ECONNRESET' ||
      !socket.writable ||
      response?.headersSent === true ||
      (held !== undefined && errorCode === 'HPE_INVALID_EOF_STATE')
    ) {
      socket.destroy();
      return;
    }
    if (held !== undefined) respondedByParser.add(socket);
    const written = rendered(
      code,
      addedBy(held?.headers, (error as { rawPacket?: unknown }).rawPacket),
    );
    socket.end(written.head + written.body);
    report(
      held?.method ?? UNPARSED_METHOD,
      held?.url ?? '-',
      written.status,
      Buffer.byteLength(written.body),
      written.id,
      startedMs,
    );
  });

  server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => {
    const startedMs = performance.now();
    const response = renderError(
      new ApiError('HTTP_417', {
        message: 'Expectation Failed: the only expectation met is "100-continue"',
      }),
      errorFormat,
    );
    const id = randomUuid();
    const bytes = Buffer.byteLength(response.body);
    res.writeHead(response.status, [
      'Content-Type',
      response.contentType,
      'Content-Length',
      String(bytes),
      REQUEST_ID_HEADER,
      id,
      ...addedBy(req.headers, undefined),
      'Connection',
      'close',
    ]);
    res.end(response.body);
    report(req.method ?? UNPARSED_METHOD, req.url ?? '-', response.status, bytes, id, startedMs);
  });
}
