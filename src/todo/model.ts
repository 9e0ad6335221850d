// The to-do resource on the wire: its input schema, its output shape, its entity tags and its
// errors.
import type { Preconditions, TagList } from '../http/conditions.js';
import { ApiError } from '../http/errors.js';
import {
  boolField,
  intParam,
  model,
  strField,
  type JsonSchema,
} from '../http/validation/schema.js';
import { jsonString } from '../common/json-string.js';
import { TODO_ID_MAX, type Todo } from './store.js';
import { UNCONDITIONAL, type VersionSet, type WriteCondition } from './write-conditions.js';

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
  // A response always carries all three (todoJson): `done` is required here, unlike in TodoIn.
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
export const todoAlreadyDone = (): ApiError =>
  new ApiError('HTTP_409', { message: 'Todo is already done' });
/** D11: the next id would be past TODO_ID_MAX. A clash with the collection's state, hence 409. */
export const noIdLeft = (): ApiError =>
  new ApiError('HTTP_409', { message: 'No id is left for a new todo' });

// A to-do's entity tag is its version on the wire: "7" for version 7 (RFC 9110 §8.8.3), always
// strong, since a version names one state of the item to the byte. Versions never repeat within a
// database (write-conditions.ts), so a tag never names two states of one URL.
export const todoTag = (version: number): string => `"${version}"`;

/** A tag this service could have sent: a quoted decimal version, without leading zeros. */
const OUR_TAG = /^"(0|[1-9][0-9]{0,15})"$/;

/**
 * The versions a list names. `strong`: If-Match's strong comparison, under which a weak tag never
 * matches; otherwise If-None-Match's weak one. A tag that is not ours names no version.
 */
export function versionsOf(list: TagList, strong: boolean): VersionSet {
  if (list === '*') return 'any';
  const versions: number[] = [];
  for (const tag of list) {
    if (strong && tag.weak) continue;
    const digits = OUR_TAG.exec(tag.opaque)?.[1];
    if (digits !== undefined && Number.isSafeInteger(Number(digits))) versions.push(Number(digits));
  }
  return versions;
}

const VERSION_REQUIRED: WriteCondition = { kind: 'required' };

/**
 * What a write asks of the item's version: what its If-Match and If-None-Match say; without either,
 * nothing. Where a version is `required` (--require-if-match), only If-Match names the version
 * read, or `If-None-Match: *` a create: without one of them the write refuses to change an item
 * that exists (an If-None-Match naming tags says which versions it refuses, not which it read).
 */
export function writeConditionOf(
  { ifMatch, ifNoneMatch }: Preconditions,
  required: boolean,
): WriteCondition {
  if (required && ifMatch === undefined && ifNoneMatch !== '*') return VERSION_REQUIRED;
  if (ifMatch === undefined && ifNoneMatch === undefined) return UNCONDITIONAL;
  return {
    kind: 'versions',
    ifMatch: ifMatch === undefined ? undefined : versionsOf(ifMatch, true),
    ifNoneMatch: ifNoneMatch === undefined ? undefined : versionsOf(ifNoneMatch, false),
  };
}
