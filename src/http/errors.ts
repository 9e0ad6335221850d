// The errors the contract layer knows. Routes throw these; only render.ts turns them into responses.
// Each names its entry in the error catalogue (catalogue.ts), which gives its status, its wire code
// and its public message in every format.
import { ERROR_CATALOGUE, type OwnCode, type StatusCode } from './catalogue.js';

export type ErrorHeaders = Readonly<Record<string, string>>;

// The errors below are answers, not faults: they are rendered and never logged with a stack, and
// capturing one would cost more than the rest of the answer (a 404 or 422 is often sent thousands
// of times a second). Their constructors turn stack capture off around super().

/**
 * An error that says no more than its HTTP status (wire code HTTP_<status>), with a client-facing
 * text: the catalogue's, or a more precise one ("Todo not found").
 */
export class HttpError extends Error {
  readonly status: number;
  constructor(
    readonly code: StatusCode,
    readonly detail: string = ERROR_CATALOGUE[code].message,
    readonly headers: ErrorHeaders = {},
  ) {
    const stackTraceLimit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(detail);
    Error.stackTraceLimit = stackTraceLimit;
    this.status = ERROR_CATALOGUE[code].status;
    this.name = 'HttpError';
  }
}

/**
 * A problem of our own that every format recognises (for example limits hidden): the default format
 * shows it as the reference does, `{"detail": {"code", "message"}}`.
 */
export class CodedError extends Error {
  readonly status: number;
  readonly publicMessage: string;
  constructor(
    readonly code: OwnCode,
    readonly headers: ErrorHeaders = {},
  ) {
    const entry = ERROR_CATALOGUE[code];
    const stackTraceLimit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(entry.message);
    Error.stackTraceLimit = stackTraceLimit;
    this.status = entry.status;
    this.publicMessage = entry.message;
    this.name = 'CodedError';
  }
}

/** One item of a 422, shaped as pydantic reports it (keys in this order on the wire). */
export interface ValidationItem {
  readonly type: string;
  readonly loc: readonly (string | number)[];
  readonly msg: string;
  readonly input: unknown;
  readonly ctx?: Readonly<Record<string, unknown>>;
}

/** The request does not fit the declared schemas: 422 with every problem found, in the reference's order. */
export class RequestValidationError extends Error {
  constructor(readonly items: readonly ValidationItem[]) {
    const stackTraceLimit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(`${items.length} validation error(s)`);
    Error.stackTraceLimit = stackTraceLimit;
    this.name = 'RequestValidationError';
  }
}

/**
 * The same failure, handed back by the pipeline as a value rather than thrown: it is not an Error,
 * because constructing one costs V8 a call into its runtime even without a stack (about 0.4 µs,
 * measured), on every 422. render.ts renders both alike.
 */
export class InvalidRequest {
  constructor(readonly items: readonly ValidationItem[]) {}
}

/**
 * A business-rule failure of a service (for example insufficient funds). The default format does not
 * recognise these, as the reference does not: they become the plain 500. The other formats render
 * them with their catalogue status and code and their public message.
 */
export abstract class DomainError extends Error {
  abstract readonly code: OwnCode;
  /** The message a client may read; never internal state beyond what the rule is about. */
  abstract readonly publicMessage: string;
}

/** The store cannot be reached: 503, so that a client knows to retry rather than give up. */
export class ServiceUnavailableError extends HttpError {
  constructor() {
    super('HTTP_503', undefined, { 'Retry-After': '1' });
    this.name = 'ServiceUnavailableError';
  }
}

/**
 * The client went away before its request was whole (it closed the connection mid-body). Not a fault
 * of ours and nobody to answer: the pipeline reports it in the request's access line (as 499), no stack.
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

export const notFound = (): HttpError => new HttpError('HTTP_404');
export const methodNotAllowed = (allow: string): HttpError => new HttpError('HTTP_405', undefined, { Allow: allow });
/** Bytes that are not text in the declared encoding, or nesting past the limit: the reference's 400. */
export const bodyNotParsable = (): HttpError => new HttpError('HTTP_400');
export const bodyTooLarge = (): HttpError => new HttpError('HTTP_413');
