// The replay: every request of the HAR, in the file's order, to the primary, the secondary and the
// candidate at once (each target sees the requests in the same order, so writes change each alike),
// then the candidate's answer compared with the primary's. Noise is learned as the replay goes,
// and the candidate's differences are judged against all of it once the replay is over, so that
// noise first seen late still clears an early request. A request that cannot be sent is listed,
// not skipped in silence; a target that gives no answer ends the replay (the targets' states
// could part from there).
//
// Bounds: every request's differing paths are kept (as noise matches them, at most
// PATHS_KEPT_MAX each), and the request and both answers of the first DETAILS_MAX differing
// requests, bodies cut as shown.ts says.
import { compareAnswers, type FieldDifference } from './compare.js';
import type { HarRequestRead } from './har.js';
import { generalPath, LearnedNoise, ruleFor } from './noise.js';
import { prepare, type ReplayRequest } from './replay-request.js';
import { routeOf } from './route-template.js';
import { send, type Answer } from './send.js';
import { showAnswer, showRequest, type ShownAnswer, type ShownRequest } from './shown.js';

export const DETAILS_MAX = 200;
export const PATHS_KEPT_MAX = 200;

export interface Targets {
  readonly primary: string;
  readonly secondary: string | undefined;
  readonly candidate: string;
}

/** A field that differed but is noise: learned from the secondary, or taken by a named rule. */
export interface NoiseField {
  readonly path: string;
  readonly by: string;
}

export interface Details {
  readonly request: ShownRequest;
  readonly primary: ShownAnswer;
  readonly candidate: ShownAnswer;
  /** The differences, noise left out. */
  readonly fields: readonly FieldDifference[];
  readonly noise: readonly NoiseField[];
}

/** A request whose candidate answer differed from the primary's before noise was taken out. */
export interface Differing {
  /** 1-based, in the HAR's order. */
  readonly index: number;
  readonly route: string;
  readonly method: string;
  readonly target: string;
  /** The differing paths, general (`[*]`), those a named rule took for noise left out. */
  readonly paths: ReadonlySet<string>;
  readonly details: Details | undefined;
}

export interface Unsent {
  readonly index: number;
  readonly method: string;
  readonly url: string;
  readonly reason: string;
}

export interface ReplayResult {
  readonly total: number;
  /** Requests answered alike, by route, in the order routes were met. */
  readonly equal: ReadonlyMap<string, number>;
  readonly differing: readonly Differing[];
  readonly noise: LearnedNoise;
  readonly unsent: readonly Unsent[];
  /** Why the replay stopped before its end, if it did. */
  readonly stopped: string | undefined;
}

type Answers = {
  readonly primary: Answer;
  readonly secondary?: Answer;
  readonly candidate: Answer;
};

async function sendToAll(
  targets: Targets,
  request: ReplayRequest,
  index: number,
): Promise<Answers | string> {
  const names = ['primary', 'secondary', 'candidate'] as const;
  const settled = await Promise.allSettled(
    names.map((name) => {
      const url = targets[name];
      return url === undefined ? Promise.resolve(undefined) : send(url, request);
    }),
  );
  const answers: Partial<Record<(typeof names)[number], Answer>> = {};
  for (const [at, outcome] of settled.entries()) {
    const name = names[at] as (typeof names)[number];
    if (outcome.status === 'rejected') {
      const why = outcome.reason instanceof Error ? outcome.reason.message : String(outcome.reason);
      return `the ${name} (${targets[name] ?? ''}) gave no answer to request #${index} (${request.method} ${request.target}): ${why}`;
    }
    if (outcome.value !== undefined) answers[name] = outcome.value;
  }
  return answers as Answers;
}

/** The candidate's differences with the named rules' noise set apart (without a secondary). */
function splitByRules(
  differences: readonly FieldDifference[],
  rules: boolean,
): { fields: FieldDifference[]; noise: NoiseField[] } {
  const fields: FieldDifference[] = [];
  const noise: NoiseField[] = [];
  for (const difference of differences) {
    const rule = rules ? ruleFor(difference) : undefined;
    if (rule === undefined) fields.push(difference);
    else noise.push({ path: difference.path, by: `rule ${rule}` });
  }
  return { fields, noise };
}

export async function replay(
  targets: Targets,
  requests: readonly HarRequestRead[],
  progress: (done: number) => void,
): Promise<ReplayResult> {
  const equal = new Map<string, number>();
  const differing: Differing[] = [];
  const unsent: Unsent[] = [];
  const noise = new LearnedNoise();
  let detailed = 0;
  let stopped: string | undefined;
  for (const [at, recorded] of requests.entries()) {
    const index = at + 1;
    const prepared = prepare(recorded);
    if (!prepared.ok) {
      unsent.push({ index, method: recorded.method, url: recorded.url, reason: prepared.reason });
      progress(index);
      continue;
    }
    const request = prepared.request;
    const answers = await sendToAll(targets, request, index);
    if (typeof answers === 'string') {
      stopped = answers;
      break;
    }
    const route = routeOf(request.method, request.target);
    if (answers.secondary !== undefined)
      noise.learn(route, compareAnswers(answers.primary, answers.secondary));
    const { fields, noise: ruled } = splitByRules(
      compareAnswers(answers.primary, answers.candidate),
      targets.secondary === undefined,
    );
    if (fields.length === 0) equal.set(route, (equal.get(route) ?? 0) + 1);
    else {
      const keep = detailed < DETAILS_MAX;
      if (keep) detailed++;
      differing.push(
        differingOf(index, route, request, fields, keep ? { answers, ruled } : undefined),
      );
    }
    progress(index);
  }
  return { total: requests.length, equal, differing, noise, unsent, stopped };
}

/** A path no noise covers: it stands for the paths of a request past PATHS_KEPT_MAX. */
export const PATHS_PAST_BOUND = '(more paths than the kit keeps)';

function differingOf(
  index: number,
  route: string,
  request: ReplayRequest,
  fields: readonly FieldDifference[],
  kept: { readonly answers: Answers; readonly ruled: readonly NoiseField[] } | undefined,
): Differing {
  const paths = new Set<string>();
  for (const field of fields) {
    if (paths.size < PATHS_KEPT_MAX) paths.add(generalPath(field.path));
    else if (!paths.has(generalPath(field.path))) paths.add(PATHS_PAST_BOUND);
  }
  const details: Details | undefined =
    kept === undefined
      ? undefined
      : {
          request: showRequest(request),
          primary: showAnswer(kept.answers.primary),
          candidate: showAnswer(kept.answers.candidate),
          fields,
          noise: kept.ruled,
        };
  return { index, route, method: request.method, target: request.target, paths, details };
}
