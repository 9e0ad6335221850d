// How a response is judged against a recorded one: status, body, and the headers of note
// (media type, Allow as a set, WWW-Authenticate, Location exactly, no Content-Type on a 204).
// The oracle is independent of the code under test: bodies are read with lossless-json, never with
// the project's own decoder (a bug there would read both sides alike and pass), and their exact
// length is compared with the recorded `body_bytes`, so spacing and escapes count too.
import { isLosslessNumber, parse } from 'lossless-json';
import type { RawResponse } from '../support/http.js';
import type { CorpusCase } from './corpus.js';

const mediaType = (value: string | undefined): string =>
  (value ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
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
    if (mediaType(header('content-type')) !== 'text/html')
      out.push(`content-type ${header('content-type')}, expected text/html`);
    if (!isHead && actual.body.length === 0) out.push('expected an HTML page, got no body');
    if (isHead && actual.body.length > 0) out.push('HEAD answered with a body');
    return out;
  }
  if (expected.check === 'openapi_codes') {
    const got = operationCodes(JSON.parse(actual.text) as OpenApiLike);
    const wanted = sortedCodes(expected.openapi_codes ?? {});
    if (JSON.stringify(got) !== JSON.stringify(wanted))
      out.push(`documented codes ${JSON.stringify(got)}, expected ${JSON.stringify(wanted)}`);
    return out;
  }

  if (want.body_kind === 'empty' && actual.body.length > 0)
    out.push(`expected no body, got ${actual.text.slice(0, 200)}`);
  if (want.body_kind === 'text' && actual.text !== want.text)
    out.push(`body ${JSON.stringify(actual.text)}, expected ${JSON.stringify(want.text)}`);
  if (want.body_kind === 'json') {
    let got: unknown;
    try {
      got = parse(actual.text);
    } catch {
      out.push(`body is not JSON: ${actual.text.slice(0, 200)}`);
    }
    if (got !== undefined) {
      const diff = jsonDiff(want.json ?? null, got, '$');
      if (diff !== undefined) out.push(`body ${diff}`);
    }
  }
  if (!isHead && actual.body.length !== want.body_bytes)
    out.push(
      `body of ${actual.body.length} bytes, recorded ${want.body_bytes}: ${actual.text.slice(0, 200)}`,
    );

  const wantType = wantHeaders.get('content-type');
  if (want.body_kind !== 'empty' || isHead) {
    if (wantType !== undefined && wantType !== header('content-type'))
      out.push(`content-type ${header('content-type')}, expected ${wantType}`);
  } else if (want.status === 204 && header('content-type') !== undefined) {
    out.push('a 204 carries a Content-Type (D5)');
  }
  if (
    wantHeaders.has('allow') &&
    methodSet(wantHeaders.get('allow')) !== methodSet(header('allow'))
  ) {
    out.push(`allow ${header('allow')}, expected ${wantHeaders.get('allow')}`);
  }
  if (!wantHeaders.has('allow') && header('allow') !== undefined)
    out.push(`unexpected allow ${header('allow')}`);
  for (const name of ['www-authenticate', 'location']) {
    if (wantHeaders.get(name) !== header(name))
      out.push(`${name} ${header(name)}, expected ${wantHeaders.get(name)}`);
  }
  return out;
}

/** Strict equality: numbers as written (an int is not a float, big integers exact), keys in the same order. */
function jsonDiff(want: unknown, got: unknown, path: string): string | undefined {
  const mismatch = `${path}: got ${show(got)}, expected ${show(want)}`;
  if (isLosslessNumber(want))
    return isLosslessNumber(got) && got.value === want.value ? undefined : mismatch;
  if (Array.isArray(want)) {
    if (!Array.isArray(got) || got.length !== want.length) return mismatch;
    for (let i = 0; i < want.length; i++) {
      const diff = jsonDiff(want[i], got[i], `${path}[${i}]`);
      if (diff !== undefined) return diff;
    }
    return undefined;
  }
  if (isObject(want)) {
    if (!isObject(got)) return mismatch;
    const wantKeys = Object.keys(want);
    const gotKeys = Object.keys(got);
    if (wantKeys.join('\u0000') !== gotKeys.join('\u0000'))
      return `${path}: keys [${gotKeys.join(',')}], expected [${wantKeys.join(',')}]`;
    for (const key of wantKeys) {
      const diff = jsonDiff(want[key], got[key], `${path}.${key}`);
      if (diff !== undefined) return diff;
    }
    return undefined;
  }
  return want === got ? undefined : mismatch;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return (
    typeof value === 'object' && value !== null && !Array.isArray(value) && !isLosslessNumber(value)
  );
}

const show = (value: unknown): string =>
  JSON.stringify(value, (_key, v: unknown) => (isLosslessNumber(v) ? v.value : v));

interface OpenApiLike {
  readonly paths?: Record<string, Record<string, { responses?: Record<string, unknown> }>>;
}

/** The three-digit codes of each operation: a `default` or `4XX` response describes bodies, not a code. */
function operationCodes(doc: OpenApiLike): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const [path, operations] of Object.entries(doc.paths ?? {})) {
    for (const [method, operation] of Object.entries(operations)) {
      out[`${method.toUpperCase()} ${path}`] = Object.keys(operation.responses ?? {}).filter(
        (code) => /^[1-5][0-9][0-9]$/.test(code),
      );
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
