// Requests and answers as the report shows them: the headers that matter, and bodies as text cut
// at SHOWN_BODY_MAX (bytes that are not UTF-8 are shown in base64). The report keeps these, never
// the answers themselves, so that what it holds per request stays small. Credentials a HAR kept
// (recorded with --keep-secrets) are sent, but reports, which CI keeps, show them redacted.
import type { HarHeader } from './har.js';
import { redactedValue } from './redact.js';
import type { ReplayRequest } from './replay-request.js';
import type { Answer } from './send.js';

export const SHOWN_BODY_MAX = 16 * 1024;

/** The answer headers the comparison reads, in the order the report lists them. */
export const HEADERS_SHOWN = [
  'content-type',
  'location',
  'allow',
  'www-authenticate',
  'retry-after',
  'etag',
] as const;

export interface ShownBody {
  /** UTF-8 text, or base64 when `base64`. */
  readonly text: string;
  readonly base64?: true;
  /** The body's whole length in bytes. */
  readonly bytes: number;
  /** Set when `text` holds only the first SHOWN_BODY_MAX bytes. */
  readonly cut?: true;
}

export interface ShownAnswer {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: ShownBody;
}

export interface ShownRequest {
  readonly method: string;
  /** Path and query, as sent. */
  readonly target: string;
  readonly headers: readonly HarHeader[];
  readonly body: ShownBody | undefined;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

export function showBody(bytes: Buffer, length = bytes.length): ShownBody {
  const cut = bytes.length > SHOWN_BODY_MAX;
  const kept = cut ? bytes.subarray(0, SHOWN_BODY_MAX) : bytes;
  const extra = cut || length > bytes.length ? { cut: true as const } : {};
  try {
    return { text: utf8.decode(kept), bytes: length, ...extra };
  } catch {
    // A cut may fall inside a character: the text up to it is still text.
    if (cut) {
      try {
        return { text: utf8.decode(kept.subarray(0, kept.length - 3)), bytes: length, ...extra };
      } catch {
        // Not text: base64 below.
      }
    }
    return { text: kept.toString('base64'), base64: true, bytes: length, ...extra };
  }
}

export function showAnswer(answer: Answer): ShownAnswer {
  const headers: Record<string, string> = {};
  for (const name of HEADERS_SHOWN) {
    const value = answer.headers[name];
    if (value !== undefined) headers[name] = value;
  }
  return { status: answer.status, headers, body: showBody(answer.body, answer.bodyLength) };
}

export function showRequest(request: ReplayRequest): ShownRequest {
  return {
    method: request.method,
    target: request.target,
    headers: request.headers.map(({ name, value }) => ({
      name,
      value: redactedValue(name, value),
    })),
    body: request.body === undefined ? undefined : showBody(request.body),
  };
}
