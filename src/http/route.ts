// What a service declares about one operation: method, path, inputs (schemas), success status,
// documented responses and the handler. The contract layer does the rest.
import { unkeyedOutcome, type KeyedOutcome, type KeyedWrite } from '../common/keyed-writes.js';
import type { Work } from '../common/work.js';
import type { Preconditions } from './conditions.js';
import { placeholdersOf } from './routing.js';
import type { Loc, ModelSpec, ParamSpec } from './validation/schema.js';

export interface Reply {
  readonly status: number;
  /** Absent for a body-less answer. A 204 never sends one, whatever is given here. */
  readonly body?: string | Buffer;
  /** Defaults to application/json. */
  readonly contentType?: string;
  readonly headers?: Readonly<Record<string, string>>;
  /**
   * The representation's entity tag, quotes included (conditions.ts): sent as ETag, on a 304 too.
   * A field of its own rather than one of `headers`, so that the responses that carry it most (a
   * read) pay for no walk over a header object.
   */
  readonly etag?: string;
}

/**
 * A documented error response beside the success and the 422: the error the operation throws, as a
 * representative instance (`accountNotFound('carol')`). The document renders it through the one
 * renderer in the active format: its status is the row's (insufficient funds is 400 in the unified
 * format and the default format's unhandled 500), its body the row's example, its kind the row's
 * schema. Nothing about its body is declared beside it, so nothing can drift from what is answered.
 */
export interface DocumentedError {
  readonly description: string;
  readonly error: Error;
  /** Response headers the response always carries, by name, with what they say. */
  readonly headers?: Readonly<Record<string, string>>;
}

export interface RouteDocs {
  /** FastAPI derives summary and operationId from the handler's name; we declare it. */
  readonly name: string;
  /** The summary, where the name's title case would not say it (a CORS preflight). */
  readonly summary?: string;
  /** What the operation does beyond its name, where a reader could not guess it. */
  readonly description?: string;
  /** Component name of the success body, or undefined for an undescribed JSON body. */
  readonly responseModel?: string;
  /**
   * A representative success body, written by the service's own writer (todoJson, accountJson): the
   * example of the success rows. Required when the success has a body.
   */
  readonly example?: string;
  readonly responses?: readonly DocumentedError[];
  /**
   * Errors the operation answers that no row of its own lists (the contract fixes a to-do
   * operation's codes), as representative instances: each is shown, rendered in the active format,
   * as an example of the row a client reads it under (`4XX` or `default`). The contract layer adds
   * those it causes itself (a body's 400 and 413, the Idempotency-Key's responses, an unhandled
   * failure).
   */
  readonly otherErrors?: readonly Error[];
  /** False for an operation that never succeeds: its success status is then not documented. */
  readonly succeeds?: boolean;
  /** The success row's description; `Successful Response`, as FastAPI words it, by default. */
  readonly successDescription?: string;
  /**
   * An operation a stage answers before routing (a CORS preflight), documented as a route: its
   * input is never validated (no 422), and only the stages before routing see it.
   */
  readonly answeredBeforeRouting?: boolean;
  /**
   * What another 2xx the operation may answer with the same body means (PUT's 201). It is
   * documented as the `2XX` range, since the contract fixes which three-digit codes a to-do
   * operation lists.
   */
  readonly otherSuccess?: string;
  /**
   * The success carries an ETag (conditions.ts); a `read` also answers If-None-Match with 304. The
   * document shows both (the 304 as the `3XX` range, as the contract fixes the three-digit codes).
   */
  readonly tagged?: 'read' | 'write';
  /** Left out of the OpenAPI document. (The built-in docs, health and metrics routes set it too, but
   * the document is drawn from the service's routes only, so for them it changes nothing.) */
  readonly hidden?: boolean;
}

export interface RouteInput<P, B> {
  readonly params: P;
  readonly body: B;
  /** If-Match and If-None-Match, for the routes that judge them (conditions.ts); the others ignore them. */
  readonly preconditions: Preconditions;
}

/**
 * How an operation takes an Idempotency-Key (src/features/idempotency/gate.ts): its one write, with
 * the key or without. Its store records the write's outcome `O` with the key; `reply` turns an
 * outcome into the response, for the first request, every replay and a request without a key
 * alike, so that a replay is the same response in the error format the service runs with.
 */
export interface Idempotent<P, B, O> {
  /**
   * The write, under the request's key when it sent one: it then runs only if the key has no live
   * record, and records its outcome. Without a key (undefined) it always runs.
   */
  write(input: RouteInput<P, B>, key: KeyedWrite | undefined, work: Work): Promise<KeyedOutcome<O>>;
  /** The response to an outcome; it throws the error to answer with, as a handler does. */
  reply(input: RouteInput<P, B>, outcome: O): Reply;
  /**
   * The key stays optional under --require-idempotency-key, which is for the writes that create
   * (POST): a PUT, a DELETE or a finish takes a key to replay its response, but needs none to be
   * safe.
   */
  readonly keyOptional?: boolean;
}

/** Whether a request to this operation must carry a key, when the service requires keys (`keysRequired`). */
export function keyRequired(
  idempotent: { readonly keyOptional?: boolean },
  keysRequired: boolean,
): boolean {
  return keysRequired && idempotent.keyOptional !== true;
}

type ParamSpecs<P> = { readonly [K in keyof P]: ParamSpec<P[K]> };

export interface RouteSpec<P, B, O> {
  readonly method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  readonly path: string;
  readonly status: number;
  readonly params: ParamSpecs<P>;
  readonly body?: ModelSpec<B>;
  readonly docs: RouteDocs;
  /** Takes an Idempotency-Key: the route's write, said once; its handler is derived from it. */
  readonly idempotent?: Idempotent<P, B, O>;
  /**
   * The handler of a route that is not `idempotent` (one that is gets its write without a key,
   * then its reply). `work`: what the store work it starts is done for (src/common/work.ts), for
   * its store call.
   */
  readonly handle?: (input: RouteInput<P, B>, work: Work) => Reply | Promise<Reply>;
}

/**
 * A path parameter: its name, its spec, where a 422 places it (made once, not per request), and
 * which of the path's {placeholders} it is (the index of its value in a route match's `values`).
 */
export type RouteParam = readonly [
  name: string,
  spec: ParamSpec<unknown>,
  loc: Loc,
  placeholder: number,
];

/** A route with its types erased, so that routes of different shapes share one table. */
export interface Route {
  readonly method: string;
  readonly path: string;
  readonly status: number;
  readonly params: readonly RouteParam[];
  readonly body: ModelSpec<unknown> | undefined;
  readonly docs: RouteDocs;
  readonly idempotent: Idempotent<Record<string, unknown>, unknown, unknown> | undefined;
  handle(input: RouteInput<Record<string, unknown>, unknown>, work: Work): Reply | Promise<Reply>;
}

export function defineRoute<P, B = undefined, O = never>(spec: RouteSpec<P, B, O>): Route {
  const placeholders = placeholdersOf(spec.path);
  return {
    method: spec.method,
    path: spec.path,
    status: spec.status,
    params: Object.entries(spec.params as Record<string, ParamSpec<unknown>>).map(
      ([name, param]): RouteParam => [name, param, ['path', name], placeholders.indexOf(name)],
    ),
    body: spec.body,
    docs: spec.docs,
    idempotent: spec.idempotent as Route['idempotent'],
    handle: handlerOf(spec) as Route['handle'],
  };
}

/** A route's handler: its own, or an idempotent route's write without a key, then its reply. */
function handlerOf<P, B, O>(
  spec: RouteSpec<P, B, O>,
): (input: RouteInput<P, B>, work: Work) => Reply | Promise<Reply> {
  const { handle, idempotent } = spec;
  if ((handle === undefined) === (idempotent === undefined))
    throw new Error(
      `${spec.method} ${spec.path}: a route gives a handler or an idempotent write, one of them`,
    );
  if (idempotent === undefined) return handle as NonNullable<typeof handle>;
  return (input, work) =>
    idempotent
      .write(input, undefined, work)
      .then((written) => idempotent.reply(input, unkeyedOutcome(written)));
}

export function jsonReply(status: number, body: string): Reply {
  return { status, body };
}
