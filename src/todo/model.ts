// The to-do resource: its input schema, its output shape and its errors.
import { HttpError } from '../http/errors.js';
import { boolField, intParam, model, SAFE_INT_MAX, strField, type JsonSchema } from '../http/schema.js';
import { jsonString } from '../json-string.js';

/**
 * Ids are numbers, except past 2^53-1: a POST after `PUT /todos/9007199254740991` takes max+1,
 * which only a bigint holds exactly. No path can name such an id (D2), but it is shown exactly.
 */
export type TodoId = number | bigint;

/** An id as the database holds it (int64), as a number while that is exact. */
export function exactId(id: bigint): TodoId {
  return id >= BigInt(Number.MIN_SAFE_INTEGER) && id <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(id) : id;
}

export interface Todo {
  readonly id: TodoId;
  readonly title: string;
  readonly done: boolean;
}

export interface TodoInput {
  readonly title: string;
  readonly done: boolean;
}

export const INITIAL_TODO: Todo = { id: 1, title: 'Buy milk', done: false };

export const todoIn = model('TodoIn', { title: strField('Title'), done: boolField('Done', false) });

/** D2: an id a path names must be exact in JavaScript. */
export const todoIdParam = intParam({ title: 'Todo Id', ge: -SAFE_INT_MAX, le: SAFE_INT_MAX });

export const TODO_SCHEMA: JsonSchema = {
  properties: {
    id: { type: 'integer', title: 'Id' },
    title: { type: 'string', title: 'Title' },
    done: { type: 'boolean', title: 'Done', default: false },
  },
  type: 'object',
  required: ['id', 'title'],
  title: 'Todo',
};

/** The wire form, keys in the reference's order; written by hand because ids may be bigints. */
export function todoJson(todo: Todo): string {
  return `{"id":${todo.id},"title":${jsonString(todo.title)},"done":${todo.done}}`;
}

export const todoNotFound = (): HttpError => new HttpError('HTTP_404', 'Todo not found');
export const todoAlreadyDone = (): HttpError => new HttpError('HTTP_409', 'Todo is already done');
