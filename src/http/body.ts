// Request bodies: read within a limit, then decoded the way FastAPI decodes a body for a model.
import { Buffer } from 'node:buffer';
import type { IncomingMessage } from 'node:http';
import { bodyNotParsable, bodyTooLarge, ClientAbortError, invalidRequest } from './errors.js';
import { BodyEncodingError, decodeJson, JsonSyntaxError } from './json/json-decode.js';
import type { JsonValue } from './json/json-value.js';

export interface BodyLimits {
  readonly bodyBytesMax: number;
  readonly nestingDepthMax: number;
}

/** What the validator sees: nothing, a decoded JSON value, or (under another media type) the raw text. */
export type DecodedBody =
  | { readonly kind: 'absent' }
  | { readonly kind: 'json'; readonly value: JsonValue }
  | { readonly kind: 'text'; readonly text: string };

const ABSENT: DecodedBody = { kind: 'absent' };
const EMPTY = Buffer.alloc(0);

/** Collects the body, refusing (413) as soon as it grows past the limit; a client that leaves mid-body is a ClientAbortError. */
export function readBody(req: IncomingMessage, bodyBytesMax: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (declared > bodyBytesMax) return Promise.reject(bodyTooLarge());
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let received = 0;
    req.on('data', (chunk: Buffer) => {
      received += chunk.length;
      if (received > bodyBytesMax) {
        req.removeAllListeners('data');
        req.resume();
        reject(bodyTooLarge());
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () =>
      resolve(
        chunks.length === 0
          ? EMPTY
          : chunks.length === 1
            ? (chunks[0] as Buffer)
            : Buffer.concat(chunks),
      ),
    );
    // A request stream fails only when its connection does before the body is whole: the client
    // left.
    req.on('error', () => reject(new ClientAbortError()));
  });
}

// The reference decodes the bytes with Python's utf-8 codec, which keeps a leading byte order mark.
const lenientUtf8 = new TextDecoder('utf-8', { ignoreBOM: true });

/**
 * FastAPI: an empty body is absent; a JSON media type is parsed (syntax errors are 422
 * json_invalid, undecodable bytes 400); any other media type, or none, hands the raw text to the
 * model.
 */
export function decodeBody(
  bytes: Buffer,
  contentType: string | undefined,
  limits: BodyLimits,
): DecodedBody {
  if (bytes.length === 0) return ABSENT;
  // The reference would fail with a 500 on non-UTF-8 bytes here; we show them as U+FFFD instead.
  if (!isJsonMediaType(contentType)) return { kind: 'text', text: lenientUtf8.decode(bytes) };
  try {
    return { kind: 'json', value: decodeJson(bytes, limits.nestingDepthMax) };
  } catch (error) {
    if (error instanceof JsonSyntaxError) {
      throw invalidRequest([
        {
          type: 'json_invalid',
          loc: ['body', error.pos],
          msg: 'JSON decode error',
          input: {},
          ctx: { error: error.msg },
        },
      ]);
    }
    if (error instanceof BodyEncodingError) throw bodyNotParsable();
    throw error;
  }
}

/**
 * Python's email.message rules, as FastAPI applies them: the part before ';', trimmed and
 * lower-cased, must hold exactly one '/', with main type `application` and sub type `json` or
 * `…+json`.
 */
export function isJsonMediaType(contentType: string | undefined): boolean {
  if (contentType === undefined) return false;
  const semicolon = contentType.indexOf(';');
  const type = (semicolon === -1 ? contentType : contentType.slice(0, semicolon))
    .trim()
    .toLowerCase();
  const slash = type.indexOf('/');
  if (slash === -1 || type.indexOf('/', slash + 1) !== -1) return false;
  if (type.slice(0, slash) !== 'application') return false;
  const subtype = type.slice(slash + 1);
  return subtype === 'json' || subtype.endsWith('+json');
}
