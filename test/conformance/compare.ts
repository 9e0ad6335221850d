// How a response is judged against a recorded one: status, body, and the headers of note
// (media type, Allow as a set, WWW-Authenticate, Location exactly, no Content-Type on a 204).
import { decodeJson } from '../../src/http/json-decode.js';
import { PyFloat, type JsonValue } from '../../src/http/json-value.js';
import type { RawResponse } from '../support/http.js';
import type { CorpusCase } from './corpus.js';

const mediaType = (value: string | undefined): string => (value ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
const methodSet = (value: string | undefined): string =>
  (value ?? '')
    .split(',')
    .map((m) => m.trim().toUpperCase())
    .filter(Boolean)
    .sort()
    .join(', ');

/** Returns the differences; empty when the response is the recorded one. */
export function differences(expected: CorpusCase, actual: RawResponse): string[] {
  const out: string[] = [];
  const want = expected.response;
  const wantHeaders = new Map(want.headers.map(([k, v]) => [k.toLowerCase(), v]));
  const header = (name: string): string | undefined => {
    const value = actual.headers[name];
    return Array.isArray(value) ? value.join(', ') : value;
  };
  const isHead = expected.request.method === 'HEAD';

  if (actual.status !== want.status) out.push(`status ${actual.status}, expected ${want.status}`);

  if (expected.check === 'docs_html') {
    if (mediaType(header('content-type')) !== 'text/html') out.push(`content-type ${header('content-type')}, expected text/html`);
    if (!isHead && actual.body.length === 0) out.push('expected an HTML page, got no body');
    if (isHead && actual.body.length > 0) out.push('HEAD answered with a body');
    return out;
  }
  if (expected.check === 'openapi_codes') {
    const got = operationCodes(JSON.parse(actual.text) as OpenApiLike);
    const wanted = sortedCodes(expected.openapi_codes ?? {});
    if (JSON.stringify(got) !== JSON.stringify(wanted)) out.push(`documented codes ${JSON.stringify(got)}, expected ${JSON.stringify(wanted)}`);
    return out;
  }

  if (want.body_kind === 'empty' && actual.body.length > 0) out.push(`expected no body, got ${actual.text.slice(0, 200)}`);
  if (want.body_kind === 'text' && actual.text !== want.text) out.push(`body ${JSON.stringify(actual.text)}, expected ${JSON.stringify(want.text)}`);
  if (want.body_kind === 'json') {
    let got: JsonValue | undefined;
    try {
      got = decodeJson(actual.body, 1000);
    } catch {
      out.push(`body is not JSON: ${actual.text.slice(0, 200)}`);
    }
    if (got !== undefined) {
      const diff = jsonDiff(want.json ?? null, got, '$');
      if (diff !== undefined) out.push(`body ${diff}`);
    }
  }

  const wantType = wantHeaders.get('content-type');
  if (want.body_kind !== 'empty' || isHead) {
    if (wantType !== undefined && wantType !== header('content-type')) out.push(`content-type ${header('content-type')}, expected ${wantType}`);
  } else if (want.status === 204 && header('content-type') !== undefined) {
    out.push('a 204 carries a Content-Type (D5)');
  }
  if (wantHeaders.has('allow') && methodSet(wantHeaders.get('allow')) !== methodSet(header('allow'))) {
    out.push(`allow ${header('allow')}, expected ${wantHeaders.get('allow')}`);
  }
  if (!wantHeaders.has('allow') && header('allow') !== undefined) out.push(`unexpected allow ${header('allow')}`);
  for (const name of ['www-authenticate', 'location']) {
    if (wantHeaders.get(name) !== header(name)) out.push(`${name} ${header(name)}, expected ${wantHeaders.get(name)}`);
  }
  return out;
}

/** Strict equality: same types (an int is not a float), same key order, exact integers. */
function jsonDiff(want: JsonValue, got: JsonValue, path: string): string | undefined {
  const show = (v: JsonValue): string => JSON.stringify(jsonToPlain(v), (_k, x: unknown) => (typeof x === 'bigint' ? `${x}n` : x));
  const mismatch = `${path}: got ${show(got)}, expected ${show(want)}`;
  if (want instanceof Map) {
    if (!(got instanceof Map)) return mismatch;
    const wantKeys = [...want.keys()];
    const gotKeys = [...got.keys()];
    if (wantKeys.join('\u0000') !== gotKeys.join('\u0000')) return `${path}: keys [${gotKeys}], expected [${wantKeys}]`;
    for (const key of wantKeys) {
      const diff = jsonDiff(want.get(key) as JsonValue, got.get(key) as JsonValue, `${path}.${key}`);
      if (diff !== undefined) return diff;
    }
    return undefined;
  }
  if (Array.isArray(want)) {
    if (!Array.isArray(got) || got.length !== want.length) return mismatch;
    for (let i = 0; i < want.length; i++) {
      const diff = jsonDiff(want[i] as JsonValue, got[i] as JsonValue, `${path}[${i}]`);
      if (diff !== undefined) return diff;
    }
    return undefined;
  }
  if (want instanceof PyFloat) return got instanceof PyFloat && got.value === want.value ? undefined : mismatch;
  if (typeof want === 'number' || typeof want === 'bigint') {
    return (typeof got === 'number' || typeof got === 'bigint') && BigInt(got) === BigInt(want) ? undefined : mismatch;
  }
  return want === got ? undefined : mismatch;
}

function jsonToPlain(value: JsonValue): unknown {
  if (value instanceof Map) return Object.fromEntries([...value].map(([k, v]) => [k, jsonToPlain(v)]));
  if (Array.isArray(value)) return value.map(jsonToPlain);
  if (value instanceof PyFloat) return value.value;
  return value;
}

interface OpenApiLike {
  readonly paths?: Record<string, Record<string, { responses?: Record<string, unknown> }>>;
}

/** The three-digit codes of each operation: a `default` or `4XX` response describes bodies, not a code. */
function operationCodes(doc: OpenApiLike): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const [path, operations] of Object.entries(doc.paths ?? {})) {
    for (const [method, operation] of Object.entries(operations)) {
      out[`${method.toUpperCase()} ${path}`] = Object.keys(operation.responses ?? {}).filter((code) => /^[1-5][0-9][0-9]$/.test(code));
    }
  }
  return sortedCodes(out);
}

function sortedCodes(codes: Readonly<Record<string, readonly string[]>>): Record<string, string[]> {
  return Object.fromEntries(
    Object.entries(codes)
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([operation, list]) => [operation, [...list].sort()]),
  );
}
