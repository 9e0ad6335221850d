// The verdict of a replay, as one document: the JSON report CI reads (`--json`) is this document,
// and the text on stdout and the HTML page are drawn from it. Here the candidate's differences
// are judged against all the noise learned, requests are counted by route, and the exit code is
// decided: 0 when the candidate differs from the primary in noise only, 1 when it differs, 2 when
// the kit could not do the whole replay (a request it could not send, a target that gave no
// answer), whatever it found before.
import type { FieldDifference } from './compare.js';
import type { Details, Differing, NoiseField, ReplayResult, Targets, Unsent } from './diff-run.js';
import { NEVER_COMPARED, NOISE_PATHS_MAX, NOISE_ROUTES_MAX, NOISE_RULES } from './noise.js';
import type { ShownAnswer, ShownRequest } from './shown.js';

export const REPORT_FORMAT = 'migration-diff/1';

export interface RouteCount {
  readonly route: string;
  readonly requests: number;
  readonly equal: number;
  readonly noiseOnly: number;
  readonly differ: number;
}

export interface ReportedRequest {
  readonly index: number;
  readonly route: string;
  readonly method: string;
  readonly target: string;
  /** The differing paths beyond noise, list indexes as `[*]`. */
  readonly paths: readonly string[];
  /** True when every difference is a 422 item said in pydantic 2's words (validation-items.ts). */
  readonly pydanticWordingOnly: boolean;
  /** Absent past the first DETAILS_MAX differing requests. */
  readonly request?: ShownRequest;
  readonly primary?: ShownAnswer;
  readonly candidate?: ShownAnswer;
  readonly fields?: readonly FieldDifference[];
  readonly noise?: readonly NoiseField[];
}

export interface MigrationReport {
  readonly format: typeof REPORT_FORMAT;
  readonly har: string;
  readonly targets: {
    readonly primary: string;
    readonly secondary: string | null;
    readonly candidate: string;
  };
  readonly noise: {
    readonly learnedFrom: 'secondary' | 'rules';
    /** Without a secondary: the rules the kit fell back on. */
    readonly rules: readonly { readonly name: string; readonly says: string }[];
    /** With a secondary: the noise learned, by route. */
    readonly learned: Readonly<Record<string, readonly string[]>>;
    readonly notCompared: string;
    /** Said when the bounds of learned noise were reached. */
    readonly bounded: string | null;
  };
  readonly summary: {
    readonly requests: number;
    readonly sent: number;
    readonly equal: number;
    readonly noiseOnly: number;
    readonly differ: number;
    readonly unsent: number;
    /** Differing requests listed without their answers (past DETAILS_MAX). */
    readonly detailsOmitted: number;
  };
  readonly routes: readonly RouteCount[];
  readonly differences: readonly ReportedRequest[];
  readonly unsent: readonly Unsent[];
  /** Why the replay stopped early, if it did. */
  readonly stopped: string | null;
  readonly exitCode: 0 | 1 | 2;
  readonly verdict: string;
}

function judged(one: Differing, result: ReplayResult): ReportedRequest | undefined {
  const paths = [...one.paths].filter((path) => !result.noise.isNoise(one.route, path));
  if (paths.length === 0) return undefined;
  const base = { index: one.index, route: one.route, method: one.method, target: one.target };
  const details: Details | undefined = one.details;
  if (details === undefined) return { ...base, paths, pydanticWordingOnly: false };
  const learned = (field: FieldDifference): boolean => result.noise.isNoise(one.route, field.path);
  const fields = details.fields.filter((field) => !learned(field));
  const noise = [
    ...details.noise,
    ...details.fields
      .filter(learned)
      .map((field) => ({ path: field.path, by: 'learned from the secondary' })),
  ];
  return {
    ...base,
    paths,
    pydanticWordingOnly: fields.every((field) => field.pydantic !== undefined),
    request: details.request,
    primary: details.primary,
    candidate: details.candidate,
    fields,
    noise,
  };
}

function routeCounts(result: ReplayResult, reported: readonly ReportedRequest[]): RouteCount[] {
  const counts = new Map<string, { equal: number; noiseOnly: number; differ: number }>();
  const at = (route: string): { equal: number; noiseOnly: number; differ: number } => {
    let count = counts.get(route);
    if (count === undefined) counts.set(route, (count = { equal: 0, noiseOnly: 0, differ: 0 }));
    return count;
  };
  for (const [route, equal] of result.equal) at(route).equal += equal;
  const differ = new Set(reported.map((one) => one.index));
  for (const one of result.differing) {
    if (differ.has(one.index)) at(one.route).differ++;
    else at(one.route).noiseOnly++;
  }
  return [...counts]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([route, count]) => ({
      route,
      requests: count.equal + count.noiseOnly + count.differ,
      ...count,
    }));
}

function verdictOf(
  result: ReplayResult,
  differ: number,
  sent: number,
): { exitCode: 0 | 1 | 2; verdict: string } {
  if (result.stopped !== undefined)
    return { exitCode: 2, verdict: `the replay stopped: ${result.stopped}` };
  if (result.unsent.length > 0) {
    const count = result.unsent.length;
    return {
      exitCode: 2,
      verdict: `${count} request${count === 1 ? '' : 's'} of the HAR could not be sent, so the comparison is incomplete (see "not sent")`,
    };
  }
  if (differ > 0)
    return { exitCode: 1, verdict: `${differ} of ${sent} requests differ beyond noise` };
  return {
    exitCode: 0,
    verdict: `the candidate answered all ${sent} requests as the primary did, noise aside`,
  };
}

export function buildReport(har: string, targets: Targets, result: ReplayResult): MigrationReport {
  const reported = result.differing
    .map((one) => judged(one, result))
    .filter((one): one is ReportedRequest => one !== undefined);
  const routes = routeCounts(result, reported);
  const sum = (key: 'equal' | 'noiseOnly' | 'differ'): number =>
    routes.reduce((total, route) => total + route[key], 0);
  const sent = sum('equal') + sum('noiseOnly') + sum('differ');
  const bySecondary = targets.secondary !== undefined;
  return {
    format: REPORT_FORMAT,
    har,
    targets: {
      primary: targets.primary,
      secondary: targets.secondary ?? null,
      candidate: targets.candidate,
    },
    noise: {
      learnedFrom: bySecondary ? 'secondary' : 'rules',
      rules: bySecondary ? [] : NOISE_RULES.map(({ name, says }) => ({ name, says })),
      learned: result.noise.byRouteShown(),
      notCompared: NEVER_COMPARED,
      bounded: result.noise.overflowed
        ? `noise was learned for at most ${NOISE_ROUTES_MAX} routes and ${NOISE_PATHS_MAX} paths each; more were met`
        : null,
    },
    summary: {
      requests: result.total,
      sent,
      equal: sum('equal'),
      noiseOnly: sum('noiseOnly'),
      differ: sum('differ'),
      unsent: result.unsent.length,
      detailsOmitted: reported.filter((one) => one.request === undefined).length,
    },
    routes,
    differences: reported,
    unsent: result.unsent,
    stopped: result.stopped ?? null,
    ...verdictOf(result, sum('differ'), sent),
  };
}
