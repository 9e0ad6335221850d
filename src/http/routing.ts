// Which route a request-target reaches, by the reference's rules (Starlette's router) and our
// deviations: a path segment is percent-decoded on its own, so %2F is data and not a separator
// (D8); a 405 lists every method of the path (D3); HEAD is served by GET routes (D4); a trailing
// slash redirects with a relative Location that keeps the query (D9).

export interface Routable {
  readonly method: string;
  readonly path: string;
}

/** A literal segment, or a {placeholder} (literal null): one shape for both, so that reading it stays monomorphic. */
interface Segment {
  readonly literal: string | null;
}

interface CompiledRoute<R> {
  readonly route: R;
  readonly segments: readonly Segment[];
}

export type RouteMatch<R> =
  /** `values`: what the path holds where the route's path has its {placeholders}, in the path's order. */
  | { readonly kind: 'route'; readonly route: R; readonly values: readonly string[] }
  | { readonly kind: 'method-not-allowed'; readonly allow: string }
  | { readonly kind: 'redirect'; readonly location: string }
  | { readonly kind: 'not-found' };

const NOT_FOUND = { kind: 'not-found' } as const;
const NO_ROUTES: readonly never[] = [];
const NO_VALUES: readonly string[] = [];

export class Router<R extends Routable> {
  /** Routes by their number of segments (declaration order kept): only those can match a path. */
  private readonly bySegmentCount = new Map<number, CompiledRoute<R>[]>();

  constructor(routes: readonly R[]) {
    for (const route of routes) {
      const segments = compilePath(route.path);
      let sameLength = this.bySegmentCount.get(segments.length);
      if (sameLength === undefined) this.bySegmentCount.set(segments.length, (sameLength = []));
      sameLength.push({ route, segments });
    }
  }

  private candidates(segmentCount: number): readonly CompiledRoute<R>[] {
    return this.bySegmentCount.get(segmentCount) ?? NO_ROUTES;
  }

  /** The path of the first route whose template the target's path fits, whatever its method. */
  templateOf(target: string): string | undefined {
    const queryAt = target.indexOf('?');
    const rawPath = queryAt === -1 ? target : target.slice(0, queryAt);
    if (rawPath.charCodeAt(0) !== 47 /* / */) return undefined;
    return this.fitting(decodeSegments(rawPath))?.path;
  }

  /** The first route whose template the path's segments fit, whatever its method. */
  private fitting(segments: readonly string[]): R | undefined {
    return this.candidates(segments.length).find(
      (c) => matchSegments(c.segments, segments) !== undefined,
    )?.route;
  }

  /** `target` is the request-target as received: raw path, then an optional query. */
  match(method: string, target: string): RouteMatch<R> {
    const queryAt = target.indexOf('?');
    const rawPath = queryAt === -1 ? target : target.slice(0, queryAt);
    if (rawPath.charCodeAt(0) !== 47 /* / */) return NOT_FOUND;
    const segments = decodeSegments(rawPath);

    let allowed: Set<string> | undefined;
    for (const { route, segments: pattern } of this.candidates(segments.length)) {
      const values = matchSegments(pattern, segments);
      if (values === undefined) continue;
      if (route.method === method || (method === 'HEAD' && route.method === 'GET')) {
        return { kind: 'route', route, values };
      }
      allowed ??= new Set();
      allowed.add(route.method);
      if (route.method === 'GET') allowed.add('HEAD');
    }
    if (allowed !== undefined)
      return { kind: 'method-not-allowed', allow: [...allowed].join(', ') };

    // Starlette strips every trailing slash and redirects if the result reaches any route at all.
    if (rawPath !== '/' && rawPath.endsWith('/')) {
      const stripped = rawPath.replace(/\/+$/, '');
      if (stripped !== '') {
        if (this.fitting(decodeSegments(stripped)) !== undefined) {
          const query = queryAt === -1 ? '' : target.slice(queryAt + 1);
          return { kind: 'redirect', location: query === '' ? stripped : `${stripped}?${query}` };
        }
      }
    }
    return NOT_FOUND;
  }
}

function compilePath(path: string): Segment[] {
  return templateSegments(path).map((part) => ({ literal: isPlaceholder(part) ? null : part }));
}

/** A route's path template cut at each '/', as written (the router and the route table read it so). */
export function templateSegments(path: string): string[] {
  return path.split('/').slice(1);
}

export function isPlaceholder(segment: string): boolean {
  return segment.startsWith('{') && segment.endsWith('}');
}

/** The names of a path's {placeholders}, in the path's order: the order of a match's `values`. */
export function placeholdersOf(path: string): string[] {
  return templateSegments(path)
    .filter(isPlaceholder)
    .map((part) => part.slice(1, -1));
}

/**
 * The segments of a path after its leading '/', each percent-decoded on its own (D8). Cut by hand:
 * String.prototype.split cost a routed request about 2,000 machine instructions (callgrind), this
 * loop a fraction of that.
 */
function decodeSegments(rawPath: string): string[] {
  const encoded = rawPath.includes('%');
  const segments: string[] = [];
  let start = 1;
  for (;;) {
    const end = rawPath.indexOf('/', start);
    const part = end === -1 ? rawPath.slice(start) : rawPath.slice(start, end);
    segments.push(encoded && part.includes('%') ? unquote(part) : part);
    if (end === -1) return segments;
    start = end + 1;
  }
}

/** The placeholders' values, in order, if the segments fit the pattern. */
function matchSegments(
  pattern: readonly Segment[],
  segments: readonly string[],
): readonly string[] | undefined {
  if (pattern.length !== segments.length) return undefined;
  let values: string[] | undefined;
  for (let i = 0; i < pattern.length; i++) {
    const literal = (pattern[i] as Segment).literal;
    const actual = segments[i] as string;
    if (literal !== null) {
      if (literal !== actual) return undefined;
    } else {
      if (actual === '') return undefined; // a parameter is never empty
      if (values === undefined) values = [actual];
      else values.push(actual);
    }
  }
  return values ?? NO_VALUES;
}

// Not fatal: bytes that are not UTF-8 become U+FFFD, as Python's unquote does. And a byte order
// mark is a character like any other there (Python's utf-8 codec keeps it), so it is not dropped.
const utf8 = new TextDecoder('utf-8', { ignoreBOM: true });

/** Python's urllib.parse.unquote: valid %XX runs are UTF-8 bytes, anything else stays as written. */
export function unquote(text: string): string {
  let out = '';
  let bytes: number[] = [];
  let i = 0;
  while (i < text.length) {
    if (
      text.charCodeAt(i) === 37 /* % */ &&
      i + 2 < text.length &&
      isHex(text.charCodeAt(i + 1)) &&
      isHex(text.charCodeAt(i + 2))
    ) {
      bytes.push(parseInt(text.slice(i + 1, i + 3), 16));
      i += 3;
      continue;
    }
    if (bytes.length > 0) {
      out += utf8.decode(Uint8Array.from(bytes));
      bytes = [];
    }
    out += text[i];
    i++;
  }
  if (bytes.length > 0) out += utf8.decode(Uint8Array.from(bytes));
  return out;
}

function isHex(c: number): boolean {
  return (c >= 48 && c <= 57) || (c >= 65 && c <= 70) || (c >= 97 && c <= 102);
}
