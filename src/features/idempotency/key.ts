// Reading the Idempotency-Key request header (IETF httpapi draft "The Idempotency-Key HTTP Header
// Field"): its value is a structured-field string, `"8e03978e-40d5-43e8-bc93-6894a57f9324"`; the
// bare form without quotes, as Stripe's clients send it, names the same key. Anything else is a
// 400 that says what a valid key looks like, so that a client can fix the request rather than
// guess. A comma is refused anywhere in the value: a proxy may fold two field lines into one,
// joined by a comma (RFC 9110 §5.3), and two keys must not pass for one.
import { ApiError } from '../../http/errors.js';

/** The longest key, in characters; a longer one is refused rather than cut. */
export const IDEMPOTENCY_KEY_LENGTH_MAX = 255;

export const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key';

/** The messages (catalogue.ts) say what a valid key looks like, so that a client can fix the request. */
export const idempotencyKeyInvalid = (): ApiError => new ApiError('IDEMPOTENCY_KEY_INVALID');
export const idempotencyKeyRequired = (): ApiError => new ApiError('IDEMPOTENCY_KEY_REQUIRED');

/** Printable ASCII but the comma, space included (a key may hold spaces; the header's edges are trimmed). */
const PRINTABLE = /^[\x20-\x2b\x2d-\x7e]+$/;

/**
 * Exactly the values parseIdempotencyKey accepts, as a pattern for the documents: a bare key (not
 * starting with a quote, no space at either edge) or a quoted one whose characters are plain or
 * one of the two escapes, 1 to 255 of them either way.
 */
export const IDEMPOTENCY_KEY_PATTERN =
  '^(?:[\\x21\\x23-\\x2b\\x2d-\\x7e](?:[\\x20-\\x2b\\x2d-\\x7e]{0,253}[\\x21-\\x2b\\x2d-\\x7e])?' +
  '|"(?:[\\x20\\x21\\x23-\\x2b\\x2d-\\x5b\\x5d-\\x7e]|\\\\["\\\\]){1,255}")$';

/**
 * The key a header value names, or undefined when the value is not a valid key. `values` is every
 * Idempotency-Key field line of the request: more than one is ambiguous, so it is refused.
 */
export function parseIdempotencyKey(values: readonly string[]): string | undefined {
  if (values.length !== 1) return undefined;
  const value = (values[0] as string).trim();
  const key = value.startsWith('"') ? unquote(value) : value;
  if (
    key === undefined ||
    key.length === 0 ||
    key.length > IDEMPOTENCY_KEY_LENGTH_MAX ||
    !PRINTABLE.test(value)
  )
    return undefined;
  return key;
}

/**
 * An sf-string (RFC 8941 §3.3.3): a quote, characters where only `\"` and `\\` are escapes, a
 * closing quote and nothing after it (parameters are not part of this header's contract).
 */
function unquote(value: string): string | undefined {
  let key = '';
  for (let i = 1; i < value.length; i++) {
    const char = value[i] as string;
    if (char === '\\') {
      const next = value[i + 1];
      if (next !== '"' && next !== '\\') return undefined;
      key += next;
      i += 1;
    } else if (char === '"') {
      return i === value.length - 1 ? key : undefined;
    } else {
      key += char;
    }
  }
  return undefined; // no closing quote
}
