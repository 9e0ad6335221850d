// The rate limit as a stage of the pipeline (stage.ts; the decision is gate.ts's): it takes
// the admission of a request to a limited operation, and adds its RateLimit fields to every
// response. It stands twice in the list: before the input for every request but a keyed write, and
// after the Idempotency-Key stage for a keyed write, so that a replay of its key is answered
// whatever the limit (the key stage found none when the call has a keyed run). A read whose
// decision waits for the shared limiter runs meanwhile (a Hold): it changes nothing, so a refusal
// after it is still a refusal that changed nothing.
import { isPromise } from '../../common/eventually.js';
import type { RequestKind } from '../../rate-limits/policy.js';
import { KEYED_RUN } from '../idempotency/stage.js';
import { rateLimitDocs } from './docs.js';
import type { RateLimitGate } from './gate.js';
import type { RateLimitSettings } from './feature.js';
import type { Route } from '../../http/route.js';
import {
  addHeaders,
  Hold,
  type Call,
  type Entered,
  type PlacedStage,
} from '../../http/stages/stage.js';

/** Which requests an instance decides: those without a keyed run (before the input), or those with one. */
export type RateLimitPlace = 'unkeyed' | 'keyed';

export function rateLimitStage(
  gate: RateLimitGate,
  settings: RateLimitSettings,
  place: RateLimitPlace,
): PlacedStage {
  return {
    name: place === 'unkeyed' ? 'rate-limit' : 'rate-limit (keyed writes)',
    place: place === 'unkeyed' ? 'route' : 'input',
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
      return KEYED_RUN.get(call) === undefined ? undefined : admit(gate, call, kind);
    },
    // Declared once, by the first instance: the same fields, the same 429.
    docs: place === 'keyed' ? undefined : rateLimitDocs(settings),
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
