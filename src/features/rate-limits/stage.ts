// The rate limit as a stage of the pipeline (stage.ts; the decision is rate-limit.ts's): it takes
// the admission of a request to a limited operation, and adds its RateLimit fields to every
// response. It stands twice in the list: before the input for every request but a keyed write, and
// after the Idempotency-Key stage for a keyed write, so that a replay of its key is answered
// whatever the limit (the key stage found none when the call has a keyed run). A read whose
// decision waits for the shared limiter runs meanwhile (a Hold): it changes nothing, so a refusal
// after it is still a refusal that changed nothing.
import { isPromise } from '../../common/eventually.js';
import type { RequestKind } from '../../rate-limits/policy.js';
import { KeyedRun } from '../idempotency/gate.js';
import { limitedKind } from './docs.js';
import {
  policyField,
  RATE_LIMIT_DRAFT,
  RATE_LIMIT_HEADER,
  RATE_LIMIT_POLICY_HEADER,
  rateLimited,
  type RateLimitGate,
} from './gate.js';
import type { RateLimits } from '../../rate-limits/policy.js';
import type { Route } from '../../http/route.js';
import {
  addHeaders,
  Hold,
  type Call,
  type Entered,
  type HeaderDoc,
  type Stage,
} from '../../http/stages/stage.js';

/** Which requests an instance decides: those without a keyed run (before the input), or those with one. */
export type RateLimitPlace = 'unkeyed' | 'keyed';

export function rateLimitStage(
  gate: RateLimitGate,
  limits: RateLimits,
  place: RateLimitPlace,
): Stage {
  return {
    name: place === 'unkeyed' ? 'rate-limit' : 'rate-limit (keyed writes)',
    enter(call: Call): Entered {
      const route = call.matched as Route;
      const kind = gate.kindOf(route, call.method);
      if (kind === undefined) return undefined;
      if (place === 'unkeyed') {
        if (gate.decidedByKeyGate(route, call.req)) return undefined;
        const admitted = admit(gate, call, kind);
        return admitted !== undefined && gate.mayRunAhead(call.method, call.req)
          ? new Hold(admitted)
          : admitted;
      }
      return call.keyed instanceof KeyedRun ? admit(gate, call, kind) : undefined;
    },
    // Declared once, by the first instance: the same fields, the same 429.
    docs: place === 'keyed' ? undefined : rateLimitDocs(limits),
  };
}

/** The limit's decision, its fields added to the call's responses: at once, or once the shared limiter answers. */
function admit(gate: RateLimitGate, call: Call, kind: RequestKind): Promise<void> | undefined {
  const headers = gate.admit(kind, call.req);
  if (!isPromise(headers)) {
    if (headers.length > 0) addHeaders(call, headers);
    return undefined;
  }
  return headers.then((list) => {
    if (list.length > 0) addHeaders(call, list);
  });
}

function rateLimitDocs(limits: RateLimits): Stage['docs'] {
  return {
    responseHeaders: (route) => {
      const kind = limitedKind(route.method, limits);
      if (kind === undefined) return undefined;
      const headers: Record<string, HeaderDoc> = {
        [RATE_LIMIT_POLICY_HEADER]: {
          description: `The limit on ${kind} per client (${RATE_LIMIT_DRAFT}): its quota q (the burst) and window w (seconds in which a whole burst comes back).`,
          example: policyField(kind, limits),
        },
        [RATE_LIMIT_HEADER]: {
          description:
            'What is left of the limit: r requests may be sent at once now, and t seconds say when it grows.',
        },
      };
      return { headers, rows: () => true };
    },
    errors: (route) => (limitedKind(route.method, limits) === undefined ? [] : [rateLimited({})]),
  };
}
