// The errors the contract layer knows. Routes throw these; only render.ts turns them into responses.
// Each class carries a stable `code`, written with it to the log. On the wire the contract decides:
// the unified format shows an HttpError as HTTP_<status> and a DomainError by its own code.

export type ErrorHeaders = Readonly<Record<string, string>>;

// The errors below are answers, not faults: they are rendered and never logged with a stack, and
// capturing one would cost more than the rest of the answer (a 404 or 422 is often sent thousands
// of times a second). Their constructors turn stack capture off around super().

/** An HTTP error with a client-facing detail: a string, or an object sent as it is. */
export class HttpError extends Error {
  readonly code: string = 'HTTP_ERROR';
  constructor(
    readonly status: number,
    readonly detail: string | Readonly<Record<string, unknown>>,
    readonly headers: ErrorHeaders = {},
  ) {
    const stackTraceLimit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(typeof detail === 'string' ? detail : `HTTP ${status}`);
    Error.stackTraceLimit = stackTraceLimit;
    this.name = 'HttpError';
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
  readonly code = 'VALIDATION_FAILED';
  constructor(readonly items: readonly ValidationItem[]) {
    const stackTraceLimit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(`${items.length} validation error(s)`);
    Error.stackTraceLimit = stackTraceLimit;
    this.name = 'RequestValidationError';
  }
}

/**
 * A business-rule failure of a service (for example insufficient funds). The default format does not
 * recognise these, as the reference does not: they become the plain 500. The unified format renders
 * them with their own status, code and public message.
 */
export abstract class DomainError extends Error {
  abstract readonly code: string;
  abstract readonly status: number;
  /** The message a client may read; never internal state beyond what the rule is about. */
  abstract readonly publicMessage: string;
}

/** The store cannot be reached: 503, so that a client knows to retry rather than give up. */
export class ServiceUnavailableError extends HttpError {
  override readonly code = 'SERVICE_UNAVAILABLE';
  constructor() {
    super(503, 'Service Unavailable', { 'Retry-After': '1' });
    this.name = 'ServiceUnavailableError';
  }
}

export const notFound = (): HttpError => new HttpError(404, 'Not Found');
export const methodNotAllowed = (allow: string): HttpError =>
  new HttpError(405, 'Method Not Allowed', { Allow: allow });
/** Bytes that are not text in the declared encoding, or nesting past the limit: the reference's 400. */
export const bodyNotParsable = (): HttpError => new HttpError(400, 'There was an error parsing the body');
export const bodyTooLarge = (): HttpError => new HttpError(413, 'Content Too Large');
