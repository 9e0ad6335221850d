// The to-do resource on the wire: its input schema, its output shape and its errors.
import { ApiError } from '../http/errors.js';
import { boolField, intParam, model, strField, type JsonSchema } from '../http/schema.js';
import { jsonString } from '../json-string.js';
import { TODO_ID_MAX, type Todo } from './store.js';

export const todoIn = model('TodoIn', { title: strField('Title'), done: boolField('Done', false) });

/** D2: an id a path names must be exact in JavaScript. */
export const todoIdParam = intParam({ title: 'Todo Id', ge: -TODO_ID_MAX, le: TODO_ID_MAX });

export const TODO_SCHEMA: JsonSchema = {
  properties: {
    id: { type: 'integer', title: 'Id' },
    title: { type: 'string', title: 'Title' },
    done: { type: 'boolean', title: 'Done', default: false },
  },
  type: 'object',
  // An answer always carries all three (todoJson): `done` is required here, unlike in TodoIn.
  required: ['id', 'title', 'done'],
  title: 'Todo',
};

/** The item the documents show: the one the store holds at start. */
export const EXAMPLE_TODO: Todo = { id: 1, title: 'Buy milk', done: false };

/** The wire form, keys in the reference's order. */
export function todoJson(todo: Todo): string {
  return `{"id":${todo.id},"title":${jsonString(todo.title)},"done":${todo.done}}`;
}

export const todoNotFound = (): ApiError => new ApiError('HTTP_404', { message: 'Todo not found' });
export const todoAlreadyDone = (): ApiError => new ApiError('HTTP_409', { message: 'Todo is already done' });
/** D11: the next id would be past TODO_ID_MAX. A clash with the collection's state, hence 409. */
export const noIdLeft = (): ApiError => new ApiError('HTTP_409', { message: 'No id is left for a new todo' });
