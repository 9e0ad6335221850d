// The errors the contract layer knows. Routes throw an ApiError; only render.ts turns it into a
// response. Each names its entry in the error catalogue (catalogue.ts), which gives its status, its
// wire code, its public message and how each format shows it.
import { ERROR_CATALOGUE, type ErrorCode } from './catalogue.js';

export type ErrorHeaders = Readonly<Record<string, string>>;

/** One item of a 422, shaped as pydantic reports it (keys in this order on the wire). */
export interface ValidationItem {
  readonly type: string;
  readonly loc: readonly (string | number)[];
  readonly msg: string;
  readonly input: unknown;
  readonly ctx?: Readonly<Record<string, unknown>>;
}

export interface ApiErrorDetails {
  /** The client-facing text: the catalogue's, or a more precise one ("Todo not found"). */
  readonly message?: string;
  /** Headers the response carries (Allow, WWW-Authenticate, Retry-After…). */
  readonly headers?: ErrorHeaders;
  /** A validation failure's items, in the reference's order. */
  readonly items?: readonly ValidationItem[];
}

/**
 * An error the service means to answer with. Most are responses, not faults: rendered and never
 * logged with a stack, and capturing one would cost more than the rest of the response (a 404 or a
 * 422 is often sent thousands of times a second), so stack capture is off around super(). The
 * exception is a business rule the default format does not recognise (insufficient funds): there it
 * is the reference's unhandled failure, logged in full with its stack.
 */
export class ApiError extends Error {
  readonly status: number;
  readonly detail: string;
  readonly headers: ErrorHeaders;
  readonly items: readonly ValidationItem[];

  constructor(
    readonly code: ErrorCode,
    details: ApiErrorDetails = {},
  ) {
    const entry = ERROR_CATALOGUE[code];
    const detail = details.message ?? entry.message;
    const stackTraceLimit = Error.stackTraceLimit;
    if (entry.inDefault !== 'unhandled') Error.stackTraceLimit = 0;
    super(detail);
    Error.stackTraceLimit = stackTraceLimit;
    this.name = 'ApiError';
    this.status = entry.status;
    this.detail = detail;
    this.headers = details.headers ?? {};
    this.items = details.items ?? [];
  }
}

/**
 * A validation failure handed back by the pipeline as a value rather than thrown: it is not an
 * Error, because constructing one costs V8 a call into its runtime even without a stack (about
 * 0.4 µs, measured), on every 422. render.ts renders it as ApiError('VALIDATION_FAILED').
 */
export class InvalidRequest {
  constructor(readonly items: readonly ValidationItem[]) {}
}

/**
 * The client went away before its request was whole (it closed the connection mid-body). Not an
 * answer (nobody is left to receive one) and not a fault of ours: the pipeline reports it in the
 * request's access line (as 499), no stack.
 */
export class ClientAbortError extends Error {
  readonly code = 'CLIENT_ABORTED';
  constructor() {
    const stackTraceLimit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super('the client closed the connection before the request was complete');
    Error.stackTraceLimit = stackTraceLimit;
    this.name = 'ClientAbortError';
  }
}

export const notFound = (): ApiError => new ApiError('HTTP_404');
export const methodNotAllowed = (allow: string): ApiError =>
  new ApiError('HTTP_405', { headers: { Allow: allow } });
/** Bytes that are not text in the declared encoding, or nesting past the limit: the reference's 400. */
export const bodyNotParsable = (): ApiError => new ApiError('HTTP_400');
export const bodyTooLarge = (): ApiError => new ApiError('HTTP_413');
/** The store cannot be reached, or is not ready: 503, so that a client knows to retry rather than give up. */
export const serviceUnavailable = (): ApiError =>
  new ApiError('HTTP_503', { headers: { 'Retry-After': '1' } });
export const invalidRequest = (items: readonly ValidationItem[]): ApiError =>
  new ApiError('VALIDATION_FAILED', { items });

/**
 * An error recorded earlier and answered again (an Idempotency-Key's replay of a refusal): rendered
 * as any error is, with the headers it carries added, and not logged again, since it was when it
 * happened. Not an Error: it is never thrown past the pipeline, only unwrapped.
 */
export class Replayed {
  constructor(
    readonly error: unknown,
    readonly headers: readonly string[],
  ) {}
}
