// A create that the test expects to succeed: the new item, or a failed assertion when the store
// had no id left (D11).
import assert from 'node:assert/strict';
import type { Todo, TodoInput } from '../../src/todo/model.js';
import type { TodoStore } from '../../src/todo/store.js';

export async function createTodo(store: Pick<TodoStore, 'create'>, input: TodoInput): Promise<Todo> {
  const outcome = await store.create(input);
  assert.equal(outcome.kind, 'created', 'the store had no id left');
  return (outcome as Extract<typeof outcome, { kind: 'created' }>).todo;
}
