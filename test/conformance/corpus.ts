// The conformance corpus (copied from the shared contract folder), read losslessly by an
// independent parser (lossless-json, never the decoder under test): expected bodies keep every
// number as its literal text, and object keys in order.
import { readFileSync } from 'node:fs';
import { isLosslessNumber, parse } from 'lossless-json';
import type { RawRequest } from '../support/http.js';

export interface CorpusRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: readonly (readonly [string, string])[];
  readonly body: string | null;
  readonly body_b64?: string;
}

/** A recorded request as the raw client sends it: its body decoded, its Host the client's own. */
export function rawRequestOf(request: CorpusRequest): RawRequest {
  return {
    method: request.method,
    path: request.path,
    headers: request.headers.filter(([name]) => name.toLowerCase() !== 'host'),
    body:
      request.body_b64 !== undefined
        ? Buffer.from(request.body_b64, 'base64')
        : (request.body ?? undefined),
  };
}

export interface CorpusResponse {
  readonly status: number;
  readonly headers: readonly (readonly [string, string])[];
  readonly body_kind: 'json' | 'text' | 'empty';
  /** As lossless-json parses it: plain objects and arrays, numbers as LosslessNumber. */
  readonly json?: unknown;
  readonly text?: string;
  /** The exact length of the recorded body. */
  readonly body_bytes: number;
}

export interface CorpusCase {
  readonly id: string;
  readonly basis: 'spec' | 'edge' | 'choice';
  readonly check: 'full' | 'docs_html' | 'openapi_codes';
  readonly note?: string;
  readonly deviation?: string | string[];
  /** With check `openapi_codes`: the three-digit codes each operation must document, by `METHOD path`. */
  readonly openapi_codes?: Readonly<Record<string, readonly string[]>>;
  readonly request: CorpusRequest;
  readonly response: CorpusResponse;
}

export interface CorpusSequence {
  readonly id: string;
  readonly target: 'todo' | 'default' | 'unified' | 'catchall';
  readonly title: string;
  readonly requests: readonly CorpusCase[];
}

const FIXTURE = new URL('../../../test/fixtures/conformance-cases.json', import.meta.url);

/** Plain numbers for the corpus' own structure; the expected `json` bodies stay lossless. */
function toPlain(value: unknown, key?: string): unknown {
  if (key === 'json') return value;
  if (isLosslessNumber(value)) return value.valueOf();
  if (Array.isArray(value)) return value.map((item) => toPlain(item));
  if (typeof value === 'object' && value !== null)
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, toPlain(v, k)]));
  return value;
}

export function loadSequences(): CorpusSequence[] {
  const corpus = toPlain(parse(readFileSync(FIXTURE, 'utf8'))) as { sequences: CorpusSequence[] };
  return corpus.sequences;
}
