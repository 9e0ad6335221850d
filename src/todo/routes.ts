// The to-do endpoints: parse (done by the declared schemas), call the store, pick the status.
import { andThen, type Eventually } from '../eventually.js';
import { serviceUnavailable } from '../http/errors.js';
import { defineRoute, jsonReply, type Reply, type Route } from '../http/route.js';
import { EXAMPLE_TODO, noIdLeft, todoAlreadyDone, todoIdParam, todoIn, todoJson, todoNotFound } from './model.js';
import type { CreateOutcome, Todo, TodoInput, TodoStore } from './store.js';

function todoReply(todo: Todo | undefined): Reply {
  if (todo === undefined) throw todoNotFound();
  return jsonReply(200, todoJson(todo));
}

/**
 * A create's answer, the first time and on every replay: the item is the request's own title and
 * done (a replay's request is the same request, to the byte) under the id the create took.
 */
function createdReply({ body }: { readonly body: TodoInput }, outcome: CreateOutcome): Reply {
  if (outcome.kind === 'no-id-left') throw noIdLeft();
  return jsonReply(201, todoJson({ id: outcome.id, title: body.title, done: body.done }));
}

/** What the documents show as a success body. */
const example = todoJson(EXAMPLE_TODO);
/** Every operation reads or writes the store: while it is away, the answer is 503. */
const storeAway = serviceUnavailable();

export function todoRoutes(store: TodoStore): Route[] {
  const byId = { todo_id: todoIdParam };
  const readTodo = ({ params }: { params: { todo_id: number } }): Eventually<Reply> => andThen(store.get(params.todo_id), todoReply);
  return [
    defineRoute({
      method: 'GET',
      path: '/todos/{todo_id}',
      status: 200,
      params: byId,
      docs: { name: 'read_todo', responseModel: 'Todo', example, otherErrors: [todoNotFound(), storeAway] },
      handle: readTodo,
    }),
    defineRoute({
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
        otherErrors: [storeAway],
      },
      async handle({ params, body }) {
        const { todo, created } = await store.replace(params.todo_id, body);
        return jsonReply(created ? 201 : 200, todoJson(todo));
      },
    }),
    defineRoute({
      method: 'DELETE',
      path: '/todos/{todo_id}',
      status: 204,
      params: byId,
      docs: { name: 'delete_todo', otherErrors: [todoNotFound(), storeAway] },
      async handle({ params }) {
        if (!(await store.remove(params.todo_id))) throw todoNotFound();
        return { status: 204 };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/todos',
      status: 201,
      params: {},
      body: todoIn,
      docs: { name: 'create_todo', responseModel: 'Todo', example, otherErrors: [noIdLeft(), storeAway] },
      idempotent: { once: ({ body }, key) => store.createOnce(body, key), reply: createdReply },
      handle: async (input) => createdReply(input, await store.create(input.body)),
    }),
    defineRoute({
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
      async handle({ params }) {
        const removed = await store.remove(params.todo_id);
        return { status: 204, body: JSON.stringify({ removed }) };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/todos/{todo_id}/done',
      status: 200,
      params: byId,
      docs: { name: 'finish_todo', responseModel: 'Todo', example: todoJson({ ...EXAMPLE_TODO, done: true }), otherErrors: [todoNotFound(), todoAlreadyDone(), storeAway] },
      async handle({ params }) {
        const outcome = await store.finish(params.todo_id);
        if (outcome.kind === 'missing') throw todoNotFound();
        if (outcome.kind === 'already-done') throw todoAlreadyDone();
        return jsonReply(200, todoJson(outcome.todo));
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/v2/todos/{todo_id}',
      status: 200,
      params: byId,
      docs: {
        name: 'read_todo_v2',
        responseModel: 'Todo',
        example,
        responses: [{ description: 'No todo with this id', error: todoNotFound() }],
        otherErrors: [storeAway],
      },
      handle: readTodo,
    }),
  ];
}
