// What the to-do routes need from storage. Each method is one atomic step: no caller ever reads
// and then writes, so that concurrent requests (and several instances) cannot interleave badly.
import type { KeyedWrite, StoredOutcome } from '../db/idempotency-records.js';
import type { Eventually } from '../http/eventually.js';
import type { Todo, TodoInput } from './model.js';

export type FinishOutcome =
  | { readonly kind: 'finished'; readonly todo: Todo }
  | { readonly kind: 'missing' }
  | { readonly kind: 'already-done' };

/** D11: the next id would be one no path can name, so nothing was created. */
export interface NoIdLeft {
  readonly kind: 'no-id-left';
}

export type CreateOutcome = { readonly kind: 'created'; readonly todo: Todo } | NoIdLeft;

export interface TodoStore {
  /** At once where the store can read without waiting (SQLite): see Eventually. */
  get(id: number): Eventually<Todo | undefined>;
  /** Creates with id = largest existing id + 1 (1 when empty), unless that is past TODO_ID_MAX. */
  create(input: TodoInput): Promise<CreateOutcome>;
  /** Replaces the item, or creates it under that id; says which. */
  replace(id: number, input: TodoInput): Promise<{ readonly todo: Todo; readonly created: boolean }>;
  /** True when an item was removed. */
  remove(id: number): Promise<boolean>;
  finish(id: number): Promise<FinishOutcome>;
  /**
   * A create under an idempotency key: it runs only if the key has no live record, and its answer
   * (201 and the new item) is recorded with the key in the same transaction. When no id is left,
   * nothing is written and the key stays free: a retry runs again.
   */
  createOnce(input: TodoInput, key: KeyedWrite): Promise<StoredOutcome | NoIdLeft>;
  /** Deletes a bounded batch of key records recorded before `expiredBeforeMs`; returns how many. */
  pruneKeys(expiredBeforeMs: number): Promise<number>;
  /** True when the database answers (for /readyz). */
  ping(): Promise<boolean>;
  close(): Promise<void>;
}
