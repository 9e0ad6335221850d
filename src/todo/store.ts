// The to-do data and what the routes need from storage. Each method is one atomic step: no caller
// ever reads and then writes, so that concurrent requests (and several instances) cannot
// interleave badly. Outcomes are plain data; the routes decide what a client is answered.
import type { Eventually } from '../eventually.js';
import type { KeyedOutcome, KeyedWrite } from '../keyed-writes.js';

export interface Todo {
  readonly id: number;
  readonly title: string;
  readonly done: boolean;
}

export interface TodoInput {
  readonly title: string;
  readonly done: boolean;
}

export const INITIAL_TODO: Todo = { id: 1, title: 'Buy milk', done: false };

/**
 * The largest id a path can name (D2: JavaScript-safe). A create never assigns more (D11): past it
 * the item could never be read, replaced or deleted again.
 */
export const TODO_ID_MAX = Number.MAX_SAFE_INTEGER;

/** A create's outcome: the id it took, or none left (D11), in which case nothing was stored. */
export type CreateOutcome = { readonly kind: 'created'; readonly id: number } | { readonly kind: 'no-id-left' };

export type FinishOutcome =
  | { readonly kind: 'finished'; readonly todo: Todo }
  | { readonly kind: 'missing' }
  | { readonly kind: 'already-done' };

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
   * A create under an idempotency key: it runs only if the key has no live record, and its outcome
   * is recorded with the key in the same transaction.
   */
  createOnce(input: TodoInput, key: KeyedWrite): Promise<KeyedOutcome<CreateOutcome>>;
  /** Deletes a bounded batch of key records recorded before `expiredBeforeMs`; returns how many. */
  pruneKeys(expiredBeforeMs: number): Promise<number>;
  /** True when the database answers (for /readyz). */
  ping(): Promise<boolean>;
  close(): Promise<void>;
}
