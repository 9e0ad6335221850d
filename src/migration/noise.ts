// Noise: the places where an answer differs from run to run of the same service, which the kit
// must not report. With a secondary, noise is learned as the replay goes: a field that differs
// between primary and secondary is noise for that route (route-template.ts), at any index of the
// lists on its path (`$.items[*].created_at`), and so is everything under it. Without one, the
// kit falls back on named rules, each said on stderr and in the report. Bounded: at most
// NOISE_ROUTES_MAX routes learned, NOISE_PATHS_MAX paths each.
import type { FieldDifference } from './compare.js';
import { pathTemplate } from './route-template.js';

export const NOISE_ROUTES_MAX = 10_000;
export const NOISE_PATHS_MAX = 1_000;

/** A path with every list index as `[*]`: the form noise is learned and matched in. */
export const generalPath = (path: string): string => path.replace(/\[\d+\]/g, '[*]');

const covers = (noise: string, path: string): boolean =>
  path === noise || path.startsWith(`${noise}.`) || path.startsWith(`${noise}[`);

/** The noise learned from a secondary, by route. */
export class LearnedNoise {
  private readonly byRoute = new Map<string, Set<string>>();
  /** True once a route or a path was not learned for the bounds. */
  overflowed = false;

  learn(route: string, differences: readonly FieldDifference[]): void {
    if (differences.length === 0) return;
    let paths = this.byRoute.get(route);
    if (paths === undefined) {
      if (this.byRoute.size >= NOISE_ROUTES_MAX) {
        this.overflowed = true;
        return;
      }
      paths = new Set();
      this.byRoute.set(route, paths);
    }
    for (const difference of differences) {
      if (paths.size >= NOISE_PATHS_MAX) this.overflowed = true;
      else paths.add(generalPath(difference.path));
    }
  }

  /** Whether a difference at this path is noise on this route. */
  isNoise(route: string, path: string): boolean {
    const general = generalPath(path);
    for (const noise of this.byRoute.get(route) ?? []) if (covers(noise, general)) return true;
    return false;
  }

  /** The learned noise, route by route, in the order routes were met. */
  byRouteShown(): Record<string, string[]> {
    return Object.fromEntries([...this.byRoute].map(([route, paths]) => [route, [...paths]]));
  }
}

export interface NoiseRule {
  readonly name: string;
  /** What the rule takes for noise, in one line. */
  readonly says: string;
  readonly matches: (difference: FieldDifference) => boolean;
}

const ISO_DATE =
  /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}(?::?\d{2})?)?)?$/i;
const HTTP_DATE = /^[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const REQUEST_ID_NAME = /^(?:x[-_]?)?(?:request|trace|correlation)[-_]?id$/i;

const both = (difference: FieldDifference, test: (value: string) => boolean): boolean =>
  typeof difference.primary === 'string' &&
  typeof difference.candidate === 'string' &&
  test(difference.primary) &&
  test(difference.candidate);

/** The last member name of a JSON path (`$.a.request_id` → `request_id`), if it ends in one. */
function lastMember(path: string): string | undefined {
  const match = /(?:\.([A-Za-z_][A-Za-z0-9_]*)|\[("(?:[^"\\]|\\.)*")\])$/.exec(path);
  if (match === null) return undefined;
  return match[1] ?? (JSON.parse(match[2] ?? '""') as string);
}

/** The rules the kit falls back on without a secondary. */
export const NOISE_RULES: readonly NoiseRule[] = [
  {
    name: 'dates',
    says: 'a field, or Retry-After, whose values on both sides are dates or times (ISO 8601 or HTTP dates)',
    matches: (d) =>
      (d.path.startsWith('$') || d.path === 'header retry-after') &&
      both(d, (value) => ISO_DATE.test(value) || HTTP_DATE.test(value)),
  },
  {
    name: 'uuids',
    says: 'a field whose values on both sides are UUIDs (request ids, generated keys)',
    matches: (d) => d.path.startsWith('$') && both(d, (value) => UUID.test(value)),
  },
  {
    name: 'request-ids',
    says: 'a field named request_id, requestId, trace_id, traceId, correlation_id or correlationId (any case), whatever its values',
    matches: (d) => d.path.startsWith('$') && REQUEST_ID_NAME.test(lastMember(d.path) ?? ''),
  },
  {
    name: 'ids-in-location',
    says: 'a Location whose values differ only in id segments (digits, UUIDs, long hex), as routes are learned',
    matches: (d) =>
      d.path === 'header location' &&
      both(d, (value) => value !== '') &&
      pathTemplate(String(d.primary)) === pathTemplate(String(d.candidate)),
  },
];

/** The name of the rule that takes a difference for noise, or undefined. */
export function ruleFor(difference: FieldDifference): string | undefined {
  return NOISE_RULES.find((rule) => rule.matches(difference))?.name;
}

/** What the kit never compares, in both modes: said in the report beside the noise. */
export const NEVER_COMPARED =
  'headers other than Content-Type (its media type, when a body is there), Location, Allow, WWW-Authenticate, Retry-After and ETag (present on the primary, missing on the candidate) are not compared: Date, Server, X-Request-Id and ETag values never are';
