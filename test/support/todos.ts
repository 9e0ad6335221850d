// A create that the test expects to succeed: the new item, as the route would answer it, or a
// failed assertion when the store had no id left (D11).
import assert from 'node:assert/strict';
import type { StoredTodo, Todo, TodoInput, TodoStore } from '../../src/todo/store.js';
import { UNBOUNDED_WORK } from '../../src/common/work.js';
import { ran } from './keys.js';

export async function createTodo(
  store: Pick<TodoStore, 'create'>,
  input: TodoInput,
): Promise<Todo> {
  const outcome = await ran(store.create(input, undefined, UNBOUNDED_WORK));
  assert.ok(outcome.kind === 'created', 'the store had no id left');
  return { id: outcome.id, title: input.title, done: input.done };
}

/** An item as stored, without its version: for the tests whose promise is about the data alone. */
export const dataOf = (todo: StoredTodo | undefined): Todo | undefined =>
  todo === undefined ? undefined : { id: todo.id, title: todo.title, done: todo.done };
