// The to-do endpoints: parse (done by the declared schemas), call the store, pick the status.
// Every response with an item but a PUT's carries its version as ETag (model.ts). Reads judge
// If-Match and If-None-Match here (conditions.ts); writes hand them to the store, which judges them
// in the write's own transaction, after the item's existence: a 404 or 409 comes before a 412, as
// RFC 9110 §13.2.1 asks (a condition is evaluated only where the request would otherwise succeed).
import { andThen, type Eventually } from '../common/eventually.js';
import { unkeyedOutcome } from '../common/keyed-writes.js';
import type { Work } from '../common/work.js';
import {
  conditionalRead,
  preconditionFailed,
  preconditionRequired,
  type Preconditions,
} from '../http/conditions.js';
import { serviceUnavailable } from '../http/errors.js';
import { defineRoute, type Reply, type Route } from '../http/route.js';
import {
  EXAMPLE_TODO,
  noIdLeft,
  todoAlreadyDone,
  todoIdParam,
  todoIn,
  todoJson,
  todoNotFound,
  todoTag,
  writeConditionOf,
} from './model.js';
import type {
  CreateOutcome,
  FinishOutcome,
  Refused,
  RemoveOutcome,
  ReplaceOutcome,
  StoredTodo,
  TodoInput,
  TodoStore,
} from './store.js';
import { UNCONDITIONAL } from './write-conditions.js';

export interface TodoRouteOptions {
  /** --require-if-match: a PUT of an existing item, or a DELETE, without If-Match answers 428. */
  readonly requireIfMatch?: boolean;
}

function todoReply(status: number, todo: StoredTodo): Reply {
  return { status, body: todoJson(todo), etag: todoTag(todo.version) };
}

function readReply(preconditions: Preconditions, todo: StoredTodo | undefined): Reply {
  if (todo === undefined) throw todoNotFound();
  const etag = todoTag(todo.version);
  return conditionalRead(preconditions, etag, { status: 200, body: todoJson(todo), etag });
}

/** The error of a write its condition refused. */
function refusal(outcome: Refused): Error {
  return outcome.kind === 'stale' ? preconditionFailed() : preconditionRequired();
}

/**
 * A create's answer, the first time and on every replay: the item is the request's own title and
 * done (a replay's request is the same request, to the byte) under the id the create took, tagged
 * with the version it was given (a create recorded before versions existed replays without one).
 */
function createdReply({ body }: { readonly body: TodoInput }, outcome: CreateOutcome): Reply {
  if (outcome.kind === 'no-id-left') throw noIdLeft();
  const json = todoJson({ id: outcome.id, title: body.title, done: body.done });
  return outcome.version === undefined
    ? { status: 201, body: json }
    : { status: 201, body: json, etag: todoTag(outcome.version) };
}

// The responses of the conditional writes, the first time and on every replay of a keyed one: a
// replay answers the outcome its first run recorded, so a write that went through replays its 2xx
// with the tag of that response where it had one, never a 412 for the version it made itself.

// A PUT's answer carries no ETag: RFC 9110 §9.3.4 allows one only where the item stored is the
// content received, and the stored item adds its id to it. A client reads the new tag with HEAD.
function replacedReply(outcome: ReplaceOutcome): Reply {
  if (outcome.kind === 'stale' || outcome.kind === 'version-required') throw refusal(outcome);
  return { status: outcome.kind === 'created' ? 201 : 200, body: todoJson(outcome.todo) };
}

function removedReply(outcome: RemoveOutcome): Reply {
  if (outcome.kind === 'missing') throw todoNotFound();
  if (outcome.kind !== 'removed') throw refusal(outcome);
  return { status: 204 };
}

function finishedReply(outcome: FinishOutcome): Reply {
  if (outcome.kind === 'missing') throw todoNotFound();
  if (outcome.kind === 'already-done') throw todoAlreadyDone();
  if (outcome.kind !== 'finished') throw refusal(outcome);
  return todoReply(200, outcome.todo);
}

/** What the documents show as a success body. */
const example = todoJson(EXAMPLE_TODO);
/** Every operation reads or writes the store: while it is away, the response is 503. */
const storeAway = serviceUnavailable();

export function todoRoutes(store: TodoStore, options: TodoRouteOptions = {}): Route[] {
  const required = options.requireIfMatch === true;
  return [
    readRoute(store),
    replaceRoute(store, required),
    deleteRoute(store, required),
    createRoute(store),
    oopsDeleteRoute(store),
    finishRoute(store),
    readV2Route(store),
  ];
}

const byId = { todo_id: todoIdParam };

/** Both reads of one item answer alike. */
function readTodo(store: TodoStore) {
  return (
    {
      params,
      preconditions,
    }: {
      params: { todo_id: number };
      preconditions: Preconditions;
    },
    work: Work,
  ): Eventually<Reply> =>
    andThen(store.get(params.todo_id, work), (todo) => readReply(preconditions, todo));
}

// A write that names a version it does not find answers 412; one that must name one and does not,
// 428.
function writeErrors(required: boolean): Error[] {
  return [preconditionFailed(), ...(required ? [preconditionRequired()] : [])];
}

/** GET /todos/{todo_id}: the item, judged against If-Match and If-None-Match. */
function readRoute(store: TodoStore): Route {
  return defineRoute({
    method: 'GET',
    path: '/todos/{todo_id}',
    status: 200,
    params: byId,
    docs: {
      name: 'read_todo',
      responseModel: 'Todo',
      example,
      tagged: 'read',
      otherErrors: [todoNotFound(), preconditionFailed(), storeAway],
    },
    handle: readTodo(store),
  });
}

/** PUT /todos/{todo_id}: replaces the item, or creates it under that id (201). */
function replaceRoute(store: TodoStore, required: boolean): Route {
  return defineRoute({
    method: 'PUT',
    path: '/todos/{todo_id}',
    status: 200,
    params: byId,
    body: todoIn,
    docs: {
      name: 'replace_todo',
      responseModel: 'Todo',
      example,
      otherSuccess: 'Successful Response; 201 when the id did not exist and the item was created',
      otherErrors: [...writeErrors(required), storeAway],
    },
    idempotent: {
      write: ({ params, body, preconditions }, key, work) =>
        store.replace(params.todo_id, body, writeConditionOf(preconditions, required), key, work),
      reply: (_, outcome) => replacedReply(outcome),
      keyOptional: true,
    },
  });
}

/** DELETE /todos/{todo_id}. */
function deleteRoute(store: TodoStore, required: boolean): Route {
  return defineRoute({
    method: 'DELETE',
    path: '/todos/{todo_id}',
    status: 204,
    params: byId,
    docs: {
      name: 'delete_todo',
      otherErrors: [todoNotFound(), ...writeErrors(required), storeAway],
    },
    idempotent: {
      write: ({ params, preconditions }, key, work) =>
        store.remove(params.todo_id, writeConditionOf(preconditions, required), key, work),
      reply: (_, outcome) => removedReply(outcome),
      keyOptional: true,
    },
  });
}

/** POST /todos: the store picks the id. */
function createRoute(store: TodoStore): Route {
  return defineRoute({
    method: 'POST',
    path: '/todos',
    status: 201,
    params: {},
    body: todoIn,
    docs: {
      name: 'create_todo',
      responseModel: 'Todo',
      example,
      tagged: 'write',
      otherErrors: [noIdLeft(), storeAway],
    },
    idempotent: {
      write: ({ body }, key, work) => store.create(body, key, work),
      reply: createdReply,
    },
  });
}

/** DELETE /oops/{todo_id}: a 204 that produces a value (the lesson below). */
function oopsDeleteRoute(store: TodoStore): Route {
  return defineRoute({
    method: 'DELETE',
    path: '/oops/{todo_id}',
    status: 204,
    params: byId,
    docs: {
      name: 'oops_delete',
      description:
        'Deletes the to-do if there is one, without checking: 204 whether or not it existed (DELETE /todos/{todo_id} answers 404 ' +
        'for a missing one). The item is really removed. The operation produces a value, which the 204 drops: a 204 never has a body.',
      otherErrors: [storeAway],
    },
    // The lesson of this endpoint: it declares 204 yet produces a value. It removes the item if
    // there is one and never checks; the value is dropped on the wire, because a 204 has no body.
    async handle({ params }, work) {
      const written = await store.remove(params.todo_id, UNCONDITIONAL, undefined, work);
      const removed = unkeyedOutcome(written).kind === 'removed';
      return { status: 204, body: JSON.stringify({ removed }) };
    },
  });
}

/** POST /todos/{todo_id}/done. */
function finishRoute(store: TodoStore): Route {
  return defineRoute({
    method: 'POST',
    path: '/todos/{todo_id}/done',
    status: 200,
    params: byId,
    docs: {
      name: 'finish_todo',
      responseModel: 'Todo',
      example: todoJson({ ...EXAMPLE_TODO, done: true }),
      tagged: 'write',
      otherErrors: [todoNotFound(), todoAlreadyDone(), preconditionFailed(), storeAway],
    },
    // 428 is for PUT and DELETE only: finishing cannot undo anyone's change, so it never requires
    // a version.
    idempotent: {
      write: ({ params, preconditions }, key, work) =>
        store.finish(params.todo_id, writeConditionOf(preconditions, false), key, work),
      reply: (_, outcome) => finishedReply(outcome),
      keyOptional: true,
    },
  });
}

/** GET /v2/todos/{todo_id}: as GET /todos/{todo_id}, its 404 documented as a response of its own. */
function readV2Route(store: TodoStore): Route {
  return defineRoute({
    method: 'GET',
    path: '/v2/todos/{todo_id}',
    status: 200,
    params: byId,
    docs: {
      name: 'read_todo_v2',
      responseModel: 'Todo',
      example,
      responses: [{ description: 'No todo with this id', error: todoNotFound() }],
      tagged: 'read',
      otherErrors: [preconditionFailed(), storeAway],
    },
    handle: readTodo(store),
  });
}
