// Every error the services answer, by its stable wire code: one table that the error classes,
// every error format and the OpenAPI schemas read, and that test/http/catalogue.test.ts checks
// against the "Error catalogue" table of docs/errors.md, so that code, wire and docs cannot drift
// apart.
//
// Adding an error is one line here (then one row in docs/errors.md):
// - `status(…)` for an error that says no more than its HTTP status: its wire code is HTTP_<status>
//   and, in problem details, its type is about:blank with the reason phrase as title;
// - `own(…)` for a problem of our own: its wire code is its name, and in problem details it has a
//   stable type URI (PROBLEM_TYPE_BASE + the code in kebab case) that /docs/problems explains.
// Wire codes never change once published: clients branch on them.
import { STATUS_CODES } from 'node:http';

/**
 * How the default format (the reference's) shows an error: `{"detail": message}`; `{"detail":
 * {code, message}}` for a problem of our own that it recognises; pydantic's items for a validation
 * failure; or not at all, as an unhandled failure (its plain 500), for a business rule the
 * reference does not recognise. The unified and problem formats show every error with its status,
 * code and message.
 */
export type DefaultShape = 'detail' | 'coded' | 'validation' | 'unhandled';

export interface CatalogueEntry {
  readonly status: number;
  /** Problem details' `title`: the reason phrase, or the problem's own short name. */
  readonly title: string;
  /**
   * The public message: the fixed text, or, where a response names a value, the text with the
   * value's name in angle brackets. An HTTP_<status> error may carry a more precise text of its own
   * (a 404's "Todo not found"); this one is what it says without one (by default the reason
   * phrase).
   */
  readonly message: string;
  /** A problem of our own (stable type URI), rather than one an HTTP status says all about. */
  readonly own: boolean;
  /** Own problems: what it means and what a client can do, shown at /docs/problems. */
  readonly about?: string;
  readonly inDefault: DefaultShape;
}

const status = (code: number, message?: string): CatalogueEntry => {
  const reason = STATUS_CODES[code] ?? `HTTP ${code}`;
  return {
    status: code,
    title: reason,
    message: message ?? reason,
    own: false,
    inDefault: 'detail',
  };
};
const own = (
  code: number,
  title: string,
  message: string,
  about: string,
  inDefault: DefaultShape = 'coded',
): CatalogueEntry => ({
  status: code,
  title,
  message,
  own: true,
  about,
  inDefault,
});

export const ERROR_CATALOGUE = {
  HTTP_400: status(400, 'There was an error parsing the body'),
  HTTP_401: status(401),
  HTTP_404: status(404, 'Not Found'),
  HTTP_405: status(405, 'Method Not Allowed'),
  HTTP_408: status(408, 'Request Timeout'),
  HTTP_409: status(409),
  HTTP_413: status(413, 'Content Too Large'),
  HTTP_417: status(417, 'Expectation Failed'),
  HTTP_431: status(431, 'Request Header Fields Too Large'),
  HTTP_503: status(503, 'Service Unavailable'),
  VALIDATION_FAILED: own(
    422,
    'Validation failed',
    'Some fields are wrong',
    'The request does not fit the declared schemas. Each item names what is wrong and where: a path parameter, or a JSON Pointer into the body. Fix the request; repeating it unchanged fails the same way.',
    'validation',
  ),
  NOT_ENOUGH_MONEY: own(
    400,
    'Not enough money',
    'Balance is <balance>, you asked for <wanted>',
    'A withdrawal asked for more than the account holds. Nothing was taken. Ask for at most the balance the message names.',
    'unhandled',
  ),
  LIMITS_HIDDEN: own(
    403,
    'Limits hidden',
    'Only managers can see limits',
    'The caller may not see account limits. Only managers can; there is no way to become one through this interface.',
  ),
  IDEMPOTENCY_KEY_INVALID: own(
    400,
    'Invalid Idempotency-Key',
    'Idempotency-Key must be one key of 1 to 255 printable ASCII characters but the comma, sent once, as a quoted string such as "8e03978e-40d5-43e8-bc93-6894a57f9324" or bare',
    "The Idempotency-Key header is not one key of 1 to 255 printable ASCII characters but the comma (a comma would let two keys folded into one line pass for one). Nothing ran. Send one field, a quoted string (the draft's form) or the bare key, and keep it for every retry of this request.",
  ),
  IDEMPOTENCY_KEY_REQUIRED: own(
    400,
    'Idempotency-Key required',
    'This operation needs an Idempotency-Key header: one key of 1 to 255 printable ASCII characters but the comma, such as "8e03978e-40d5-43e8-bc93-6894a57f9324"',
    'The service was started with --require-idempotency-key, and this creating write came without a key. Nothing ran. Make up a new key (a UUID) for the request, and send the same one with every retry of it.',
  ),
  IDEMPOTENCY_KEY_IN_FLIGHT: own(
    409,
    'Request in flight',
    'A request with this Idempotency-Key is still running; retry it later',
    'A request with the same key is still running, on this instance or another. Nothing ran twice. Retry after the Retry-After seconds: you then get its answer.',
  ),
  IDEMPOTENCY_KEY_REUSED: own(
    422,
    'Idempotency-Key reused',
    'This Idempotency-Key was used for another request (another method, path or body)',
    'The key was recorded for a request with another method, path or body. Nothing ran. A key names one request: use a new key for a new request.',
  ),
  PRECONDITION_FAILED: own(
    412,
    'Precondition failed',
    'The item is not in the state the If-Match or If-None-Match header names: read it again',
    'The request named the version it expects (If-Match) or refuses (If-None-Match), and the item holds another: someone changed it since you read it, or it was created or removed. Nothing changed. Read it again (GET gives the current ETag), decide again, and send the new tag.',
  ),
  PRECONDITION_REQUIRED: own(
    428,
    'Precondition required',
    'This write needs an If-Match header naming the version you read, such as If-Match: "7"',
    'The service was started with --require-if-match, and this PUT or DELETE of an existing item came without If-Match. Nothing changed. Read the item, and send its ETag in If-Match, so that a change made since your read is refused (412) instead of lost.',
  ),
  DEADLINE_EXCEEDED: own(
    504,
    'Deadline exceeded',
    'The request was not answered within the time the service allows it; it may still take effect',
    'The request took longer than the service allows one (--deadline-ms), most often because the database did not answer in time. A write that had not started was dropped; one that had started may still complete. Retry after the Retry-After seconds with the same Idempotency-Key: you then get the first answer, or the write runs now.',
  ),
  OVERLOADED: own(
    503,
    'Overloaded',
    'The service is overloaded; retry after the Retry-After seconds',
    'The service is past its saturation signal (requests waiting on the database, or event-loop delay) and turned the request away before doing any of its work. Nothing ran. Retry after the Retry-After seconds, which vary from answer to answer so that clients do not come back together.',
  ),
  RATE_LIMITED: own(
    429,
    'Too many requests',
    'Too many requests: retry after the Retry-After seconds',
    'The client sent more requests of this kind (reads or writes) than the service admits: a burst at once, then a steady rate. Nothing ran. Wait the Retry-After seconds; the RateLimit and RateLimit-Policy fields say the limit and what is left of it.',
  ),
  CROSS_ORIGIN_REFUSED: own(
    403,
    'Cross-origin request refused',
    'A page on another origin may not make this request',
    "A browser said this write was sent by a page on another site (Sec-Fetch-Site, or an Origin the service does not trust), as a forged form or fetch() would be. Nothing ran. Make the request from a page on the service's own origin or one of its --cors-origin origins, or from a client that is not a browser page.",
  ),
  OPERATION_SUNSET: own(
    410,
    'Operation withdrawn',
    'This operation reached its sunset and is no longer served: the Link header names its documentation',
    'The operation was deprecated (its answers carried Deprecation and Sunset) and its sunset has passed. Nothing ran. The Link header with rel="deprecation" leads to its documentation, which says what replaces it.',
  ),
  INTERNAL: { ...status(500, 'Something went wrong on our side'), inDefault: 'unhandled' },
} as const satisfies Record<string, CatalogueEntry>;

export type ErrorCode = keyof typeof ERROR_CATALOGUE;

/**
 * Problem types are relative URIs: a service does not know the origin its clients reach it by, and
 * a relative reference resolves against the request's URL (RFC 9457 §3.1.1) to the page that
 * explains it.
 */
export const PROBLEM_TYPE_BASE = '/docs/problems#';

/** `about:blank` for an error its status says all about, else the problem's stable type URI. */
export function problemType(code: ErrorCode): string {
  return ERROR_CATALOGUE[code].own
    ? PROBLEM_TYPE_BASE + code.toLowerCase().replaceAll('_', '-')
    : 'about:blank';
}

export const catalogueEntries = (): [ErrorCode, CatalogueEntry][] =>
  Object.entries(ERROR_CATALOGUE) as [ErrorCode, CatalogueEntry][];
