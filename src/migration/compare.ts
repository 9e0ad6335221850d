// How two answers to the same request are compared: the status, the headers that matter (those
// the conformance replay compares, test/conformance/compare.ts, and Retry-After and ETag), and the
// bodies as JSON, field by field. Bodies are read with lossless-json, so that numbers compare as
// written (an integer past 2^53 stays exact, 1 is not 1.0) and a duplicate key is no surprise.
// Key order is ignored; lists compare index by index, but for the validation items of a 422,
// paired by `loc` (validation-items.ts). The same comparison finds noise (primary against
// secondary) and differences (primary against candidate).
import { isLosslessNumber, parse } from 'lossless-json';
import type { Answer } from './send.js';
import { isItemList, pairItems, pydanticWording } from './validation-items.js';

/** One place where two answers differ; a side where the field is absent has no value. */
export interface FieldDifference {
  /** `status`, `header <name>`, `body` (a body that is not JSON), or a JSON path such as `$.detail[0].msg`. */
  readonly path: string;
  readonly primary?: unknown;
  readonly candidate?: unknown;
  /** Set when the difference is a 422 item said by pydantic 2 as pydantic 1 said it: `type_error.integer → int_parsing`. */
  readonly pydantic?: string;
}

const mediaType = (value: string | undefined): string | undefined =>
  value === undefined ? undefined : (value.split(';')[0] ?? '').trim().toLowerCase();
const methodSet = (value: string | undefined): string | undefined =>
  value === undefined
    ? undefined
    : value
        .split(',')
        .map((method) => method.trim().toUpperCase())
        .filter(Boolean)
        .sort()
        .join(', ');

/** The headers that matter, each as it is compared; ETag by presence only, and only the primary's. */
const HEADERS: readonly (readonly [string, (value: string | undefined) => string | undefined])[] = [
  ['location', (value) => value],
  ['allow', methodSet],
  ['www-authenticate', (value) => value?.toLowerCase()],
  ['retry-after', (value) => value],
];

function headerDifferences(primary: Answer, candidate: Answer): FieldDifference[] {
  const out: FieldDifference[] = [];
  const push = (name: string, a: string | undefined, b: string | undefined): void => {
    out.push({
      path: `header ${name}`,
      ...(a === undefined ? {} : { primary: a }),
      ...(b === undefined ? {} : { candidate: b }),
    });
  };
  // A Content-Type says nothing of an empty body (FastAPI sends one on its 204s).
  if (primary.bodyLength > 0 || candidate.bodyLength > 0) {
    const [a, b] = [primary.headers['content-type'], candidate.headers['content-type']];
    if (mediaType(a) !== mediaType(b)) push('content-type', a, b);
  }
  for (const [name, normal] of HEADERS) {
    const [a, b] = [primary.headers[name], candidate.headers[name]];
    if (normal(a) !== normal(b)) push(name, a, b);
  }
  // A client of the primary may rely on its ETags; one the candidate adds is a client's bonus.
  const etag = primary.headers.etag;
  if (etag !== undefined && candidate.headers.etag === undefined) push('etag', etag, undefined);
  return out;
}

type Parsed = { readonly json: unknown } | { readonly text: string };

function read(answer: Answer): Parsed {
  const text = answer.body.toString('utf8');
  if (answer.body.length === 0 || answer.truncated !== undefined) return { text };
  try {
    return { json: parse(text) };
  } catch {
    return { text };
  }
}

function bodyDifferences(primary: Answer, candidate: Answer): FieldDifference[] {
  if (primary.truncated !== undefined || candidate.truncated !== undefined) {
    const summary = (answer: Answer): string =>
      `${answer.bodyLength} bytes, SHA-256 ${answer.truncated?.sha256 ?? 'of the kept body'}`;
    const same =
      primary.truncated?.sha256 === candidate.truncated?.sha256 &&
      primary.bodyLength === candidate.bodyLength;
    return same ? [] : [{ path: 'body', primary: summary(primary), candidate: summary(candidate) }];
  }
  const [a, b] = [read(primary), read(candidate)];
  if ('json' in a && 'json' in b) return jsonDifferences(a.json, b.json, '$', undefined);
  if (primary.body.equals(candidate.body)) return [];
  const shown = (parsed: Parsed): unknown => ('json' in parsed ? parsed.json : parsed.text);
  return [{ path: 'body', primary: shown(a), candidate: shown(b) }];
}

/** Every difference between two answers, status first, then headers, then the body's fields. */
export function compareAnswers(primary: Answer, candidate: Answer): FieldDifference[] {
  const status: FieldDifference[] =
    primary.status === candidate.status
      ? []
      : [{ path: 'status', primary: primary.status, candidate: candidate.status }];
  return [
    ...status,
    ...headerDifferences(primary, candidate),
    ...bodyDifferences(primary, candidate),
  ];
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value) && !isLosslessNumber(value);

/** A member's path: `$.name`, or `$["a name"]` for a key that is no identifier. */
export function memberPath(path: string, key: string): string {
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(key)
    ? `${path}.${key}`
    : `${path}[${JSON.stringify(key)}]`;
}

function sameScalar(a: unknown, b: unknown): boolean {
  if (isLosslessNumber(a) || isLosslessNumber(b))
    return isLosslessNumber(a) && isLosslessNumber(b) && a.value === b.value;
  return a === b;
}

function jsonDifferences(
  a: unknown,
  b: unknown,
  path: string,
  pydantic: string | undefined,
): FieldDifference[] {
  const note = pydantic === undefined ? {} : { pydantic };
  if (isObject(a) && isObject(b)) {
    const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])];
    return keys.flatMap((key) => {
      const at = memberPath(path, key);
      if (!(key in b)) return [{ path: at, primary: a[key], ...note }];
      if (!(key in a)) return [{ path: at, candidate: b[key], ...note }];
      return jsonDifferences(a[key], b[key], at, pydantic);
    });
  }
  if (isItemList(a) && isItemList(b)) {
    return pairItems(a, b).flatMap((pair) =>
      jsonDifferences(
        pair.primary,
        pair.candidate,
        `${path}[${pair.index}]`,
        pydanticWording(pair),
      ),
    );
  }
  if (Array.isArray(a) && Array.isArray(b)) {
    return Array.from({ length: Math.max(a.length, b.length) }, (_, index) => {
      const at = `${path}[${index}]`;
      if (index >= b.length) return [{ path: at, primary: a[index] }];
      if (index >= a.length) return [{ path: at, candidate: b[index] }];
      return jsonDifferences(a[index], b[index], at, pydantic);
    }).flat();
  }
  if (a === undefined) return [{ path, candidate: b, ...note }];
  if (b === undefined) return [{ path, primary: a, ...note }];
  const bothComposite = (isObject(a) || Array.isArray(a)) && (isObject(b) || Array.isArray(b));
  if (!bothComposite && sameScalar(a, b)) return [];
  return [{ path, primary: a, candidate: b, ...note }];
}
