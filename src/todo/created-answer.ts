// The answer a keyed create records with its write: the route's own 201 and body, built from the
// row as stored (the title still encoded, see title.ts), so that the writer thread can build it.
import type { StoredAnswer } from '../db/idempotency-records.js';
import { JSON_TYPE } from '../http/render.js';
import { todoJson } from './model.js';
import { decodeTitle } from './title.js';

export function createdAnswer(id: number, encodedTitle: string, done: number | boolean): StoredAnswer {
  const todo = { id, title: decodeTitle(encodedTitle), done: done === 1 || done === true };
  return { status: 201, contentType: JSON_TYPE, headers: {}, body: todoJson(todo) };
}
