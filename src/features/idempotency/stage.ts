// The Idempotency-Key as a stage (stage.ts), after the input is read: an idempotent operation's
// request with a key gets the replay of its recorded outcome, or the key's own errors; a key with
// no record yet makes the call run its write under the key (gate.ts) instead of the route's
// handler. The keyed run stays in the stage's slot, where the rate limit's second stage looks for
// it (a replay is answered whatever the limit).
import {
  Slot,
  type Call,
  type Entered,
  type Handler,
  type PlacedStage,
} from '../../http/stages/stage.js';
import { keyRequired, type Route } from '../../http/route.js';
import {
  IdempotencyGate,
  keyInFlight,
  keyReused,
  KeyedRun,
  type IdempotencyPolicy,
} from './gate.js';
import { idempotencyKeyParameter, KEY_ANSWERS_ROW, REPLAYED_HEADER_DOCS } from './docs.js';
import { idempotencyKeyInvalid, idempotencyKeyRequired } from './key.js';

/** The keyed write a call runs, once the stage found no recorded outcome for its key. */
export const KEYED_RUN = new Slot<KeyedRun>('keyed run');

type Idempotent = NonNullable<Route['idempotent']>;

export function idempotencyStage(gate: IdempotencyGate, policy: IdempotencyPolicy): PlacedStage {
  const keyed: Handler = (call) =>
    gate.once(
      (call.matched as Route).idempotent as Idempotent,
      call.input as NonNullable<Call['input']>,
      KEYED_RUN.get(call) as KeyedRun,
      call.work,
    );
  return {
    name: 'idempotency',
    place: 'input',
    enter(call: Call): Entered {
      const idempotent = (call.matched as Route).idempotent;
      if (idempotent === undefined) return undefined;
      const found = gate.lookup(
        idempotent,
        call.input as NonNullable<Call['input']>,
        call.req,
        call.body,
      );
      if (!(found instanceof KeyedRun)) return found;
      KEYED_RUN.set(call, found);
      call.handler = keyed;
      return undefined;
    },
    docs: {
      headers: REPLAYED_HEADER_DOCS,
      // A replay answers the recorded outcome, whatever its status: every row may be one.
      responseHeaders: (route) =>
        route.idempotent === undefined ? [] : [{ names: Object.keys(REPLAYED_HEADER_DOCS) }],
      requestHeaders: (route) =>
        route.idempotent === undefined
          ? []
          : [idempotencyKeyParameter(keyRequired(route.idempotent, policy.required), policy.ttlMs)],
      errors: (route) => {
        const idempotent = route.idempotent;
        if (idempotent === undefined) return [];
        const required = keyRequired(idempotent, policy.required);
        return [
          idempotencyKeyInvalid(),
          ...(required ? [idempotencyKeyRequired()] : []),
          keyInFlight(),
          keyReused(),
        ];
      },
      rows: (route) => (route.idempotent === undefined ? [] : [KEY_ANSWERS_ROW]),
    },
  };
}
