// A create that the test expects to succeed: the new item, as the route would answer it, or a
// failed assertion when the store had no id left (D11).
import assert from 'node:assert/strict';
import type { Todo, TodoInput, TodoStore } from '../../src/todo/store.js';

export async function createTodo(store: Pick<TodoStore, 'create'>, input: TodoInput): Promise<Todo> {
  const outcome = await store.create(input);
  assert.ok(outcome.kind === 'created', 'the store had no id left');
  return { id: outcome.id, title: input.title, done: input.done };
}
