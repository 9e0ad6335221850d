// The conformance corpus (copied from the shared contract folder), read losslessly: expected
// bodies keep big integers exact, floats as floats, and object keys in order.
import { readFileSync } from 'node:fs';
import { decodeJson } from '../../src/http/json-decode.js';
import { PyFloat, type JsonValue } from '../../src/http/json-value.js';

export interface CorpusRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: readonly (readonly [string, string])[];
  readonly body: string | null;
  readonly body_b64?: string;
}

export interface CorpusResponse {
  readonly status: number;
  readonly headers: readonly (readonly [string, string])[];
  readonly body_kind: 'json' | 'text' | 'empty';
  readonly json?: JsonValue;
  readonly text?: string;
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

/** Plain objects for the corpus' own structure; the expected `json` bodies stay lossless. */
function toPlain(value: JsonValue, key?: string): unknown {
  if (key === 'json') return value;
  if (value instanceof Map) return Object.fromEntries([...value].map(([k, v]) => [k, toPlain(v, k)]));
  if (Array.isArray(value)) return value.map((item) => toPlain(item));
  if (value instanceof PyFloat) return value.value;
  if (typeof value === 'bigint') return Number(value);
  return value;
}

export function loadSequences(): CorpusSequence[] {
  const corpus = toPlain(decodeJson(readFileSync(FIXTURE), 1000)) as { sequences: CorpusSequence[] };
  return corpus.sequences;
}
