// What tracing reads of a request, as the SDK's variables configure it: OTEL_PROPAGATORS (which
// context headers are read) and OTEL_INSTRUMENTATION_HTTP_KNOWN_METHODS (which methods a span
// names as they are, as the HTTP semantic conventions require the variable be read). A value this
// service cannot use is warned of once and ignored (settings-reader.ts).
import { listOf, type SettingsReader } from './settings-reader.js';

/** The propagators read (OTEL_PROPAGATORS, default tracecontext,baggage). */
export interface Propagators {
  /** W3C Trace Context: traceparent and tracestate continue the caller's trace. */
  readonly traceContext: boolean;
  /**
   * W3C Baggage: the header is accepted (a browser's preflight may name it). The services call no
   * other service and record no baggage on a span, so nothing more is done with it.
   */
  readonly baggage: boolean;
}

const SUPPORTED_PROPAGATORS = ['tracecontext', 'baggage', 'none'];
const DEFAULT_PROPAGATORS: Propagators = { traceContext: true, baggage: true };

/**
 * The methods of RFC 9110, PATCH (RFC 5789) and QUERY, as the HTTP conventions define "known" by
 * default (@opentelemetry/semantic-conventions, http.request.method).
 */
export const DEFAULT_KNOWN_METHODS: readonly string[] = [
  'GET',
  'HEAD',
  'POST',
  'PUT',
  'DELETE',
  'CONNECT',
  'OPTIONS',
  'TRACE',
  'PATCH',
  'QUERY',
];

/** An HTTP method is a token (RFC 9110 §9.1, §5.6.2). */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

export function readPropagators(read: SettingsReader): Propagators {
  const text = read.get('OTEL_PROPAGATORS');
  if (text === undefined) return DEFAULT_PROPAGATORS;
  const names = listOf(text);
  const unsupported = names.filter((name) => !SUPPORTED_PROPAGATORS.includes(name));
  const known = names.filter((name) => SUPPORTED_PROPAGATORS.includes(name));
  if (known.length === 0) {
    read.warn(
      'OTEL_PROPAGATORS',
      `${quoted(unsupported)} not supported (tracecontext, baggage and none are): the default, tracecontext,baggage, used instead`,
    );
    return DEFAULT_PROPAGATORS;
  }
  // "none" means none, whatever else the list holds.
  const propagators = known.includes('none')
    ? { traceContext: false, baggage: false }
    : { traceContext: known.includes('tracecontext'), baggage: known.includes('baggage') };
  if (unsupported.length > 0)
    read.warn(
      'OTEL_PROPAGATORS',
      `${quoted(unsupported)} not supported (tracecontext, baggage and none are): ignored, ${known.join(',')} used`,
    );
  return propagators;
}

/** The whole list, case-sensitive, replacing the default one (the conventions say so); a list with an entry that is no method is ignored whole. */
export function readKnownMethods(read: SettingsReader): ReadonlySet<string> {
  const text = read.get('OTEL_INSTRUMENTATION_HTTP_KNOWN_METHODS');
  if (text === undefined) return new Set(DEFAULT_KNOWN_METHODS);
  const methods = text
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  const invalid = methods.filter((method) => !TOKEN.test(method));
  if (invalid.length === 0) return new Set(methods);
  read.warn(
    'OTEL_INSTRUMENTATION_HTTP_KNOWN_METHODS',
    `${quoted(invalid)} not an HTTP method: the default list, ${DEFAULT_KNOWN_METHODS.join(',')}, used instead`,
  );
  return new Set(DEFAULT_KNOWN_METHODS);
}

const quoted = (names: readonly string[]): string =>
  `${names.map((name) => `"${name}"`).join(', ')} ${names.length === 1 ? 'is' : 'are'}`;
