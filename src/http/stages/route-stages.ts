// The stages of the route itself (stage.ts): routing (404, 405, the trailing-slash 307), the input
// (path parameters, the body within its limits, validation: 400, 413, 422), the Idempotency-Key
// (a replay, or the key's own errors), and the handler they lead to, with its conditions.
import { decodeBody, readBody, type BodyLimits } from '../body.js';
import { preconditionsOf } from '../conditions.js';
import { InvalidRequest, methodNotAllowed, notFound } from '../errors.js';
import { IdempotencyGate, KeyedRun, REPLAYED_HEADER } from '../../features/idempotency/gate.js';
import { renderError, type ErrorFormat } from '../render.js';
import type { Reply, Route } from '../route.js';
import { Router } from '../routing.js';
import type { Issues } from '../validation/schema.js';
import type { Call, Entered, Handler, HeaderDoc, StageReply, Stage } from './stage.js';

/** Matches the request to a route: the call's `matched` and `values`, or the 404, 405 or 307. */
export function routingStage(routes: readonly Route[], errorFormat: ErrorFormat): Stage {
  const router = new Router(routes);
  // The constant response to an unknown path, rendered once. Its body stays a string: node:http
  // sends a string body in one write with the head, a Buffer in a write of its own.
  const rendered = renderError(notFound(), errorFormat);
  const notFoundReply: Reply = {
    status: rendered.status,
    body: rendered.body,
    contentType: rendered.contentType,
  };
  return {
    name: 'routing',
    enter(call: Call): Entered {
      const match = router.match(call.method, call.url);
      switch (match.kind) {
        case 'route':
          call.route = match.route.path;
          call.matched = match.route;
          call.values = match.values;
          return undefined;
        case 'redirect':
          return { status: 307, headers: { Location: match.location } };
        case 'method-not-allowed':
          throw methodNotAllowed(match.allow);
        case 'not-found':
          return notFoundReply;
      }
    },
  };
}

/**
 * Reads the matched route's input: its path parameters, and its body (read within the limit,
 * decoded, validated). The call's `input` and `body`, or the validation failure to answer with.
 */
export function inputStage(limits: BodyLimits): Stage {
  return {
    name: 'input',
    enter(call: Call): Entered {
      const route = call.matched as Route;
      const values = call.values as readonly string[];
      const issues: Issues = [];
      const params: Record<string, unknown> = {};
      for (const [name, spec, loc, placeholder] of route.params)
        params[name] = spec.fromText(values[placeholder] as string, loc, issues);
      const bodySpec = route.body;
      const { req } = call;
      if (bodySpec === undefined) {
        if (issues.length > 0) return new InvalidRequest(issues);
        call.input = { params, body: undefined, preconditions: preconditionsOf(req.headers) };
        return undefined;
      }
      return readBody(req, limits.bodyBytesMax).then((bytes): StageReply | undefined => {
        // As in the reference, the body is decoded before anything is validated: a JSON syntax
        // error (or undecodable bytes) is reported alone, even when a path parameter is also wrong.
        const decoded = decodeBody(bytes, req.headers['content-type'], limits);
        const body =
          decoded.kind === 'text'
            ? bodySpec.fromRawText(decoded.text, ['body'], issues)
            : bodySpec.fromBody(
                decoded.kind === 'json' ? decoded.value : undefined,
                ['body'],
                issues,
              );
        if (issues.length > 0) return new InvalidRequest(issues);
        call.input = { params, body, preconditions: preconditionsOf(req.headers) };
        call.body = bytes;
        return undefined;
      });
    },
  };
}

/** An idempotent route's Idempotency-Key: the replay of its recorded outcome, or the call's `keyed` run. */
export function idempotencyStage(gate: IdempotencyGate): Stage {
  return {
    name: 'idempotency',
    enter(call: Call): Entered {
      const idempotent = (call.matched as Route).idempotent;
      if (idempotent === undefined) return undefined;
      const found = gate.lookup(
        idempotent,
        call.input as NonNullable<Call['input']>,
        call.req,
        call.body,
      );
      if (found instanceof KeyedRun) call.keyed = found;
      else if (found !== undefined) return found;
      return undefined;
    },
    docs: {
      // A replay answers the recorded outcome, whatever its status: every row may be one.
      responseHeaders: (route) =>
        route.idempotent === undefined ? undefined : { headers: REPLAYED_DOC, rows: () => true },
    },
  };
}

const REPLAYED_DOC: Readonly<Record<string, HeaderDoc>> = {
  [REPLAYED_HEADER]: {
    description:
      'Present (true) when this answer is the recorded answer of an earlier request with the same Idempotency-Key.',
  },
};

/** The route's handler, or, for a keyed write, its write under the key (idempotency.ts). */
export function routeHandler(gate: IdempotencyGate): Handler {
  return (call) => {
    const route = call.matched as Route;
    const input = call.input as NonNullable<Call['input']>;
    const keyed = call.keyed;
    return keyed instanceof KeyedRun && route.idempotent !== undefined
      ? gate.once(route.idempotent, input, keyed, call.work)
      : route.handle(input, call.work);
  };
}
