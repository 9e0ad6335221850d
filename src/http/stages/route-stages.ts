// The stages of the route itself (stage.ts): routing (404, 405, the trailing-slash 307), the input
// (path parameters, the body within its limits, validation: 400, 413, 422), and the handler they
// lead to.
import { decodeBody, readBody, type BodyLimits } from '../body.js';
import { preconditionsOf } from '../conditions.js';
import {
  bodyNotParsable,
  bodyTooLarge,
  InvalidRequest,
  methodNotAllowed,
  notFound,
} from '../errors.js';
import { renderError, type ErrorFormat } from '../render.js';
import type { Reply, Route } from '../route.js';
import type { Router } from '../routing.js';
import type { Issues } from '../validation/schema.js';
import type { Call, Entered, Handler, StageReply, Stage } from './stage.js';

/** Matches the request to a route: the call's `matched` and `values`, or the 404, 405 or 307. */
export function routingStage(router: Router<Route>, errorFormat: ErrorFormat): Stage {
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
    docs: {
      errors: (route) => (route.body === undefined ? [] : [bodyNotParsable(), bodyTooLarge()]),
    },
  };
}

/** The terminal of the fold: what a stage put in place of the route's handler, else the route's. */
export const routeHandler: Handler = (call) =>
  call.handler === undefined
    ? (call.matched as Route).handle(call.input as NonNullable<Call['input']>, call.work)
    : call.handler(call);
