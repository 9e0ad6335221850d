// The to-do data and what the routes need from storage. Each method is one atomic step: no caller
// ever reads and then writes, so that concurrent requests (and several instances) cannot
// interleave badly. Outcomes are plain data; the routes decide what a client is answered.
import type { Eventually } from '../common/eventually.js';
import type { KeyedOutcome, KeyedWrite } from '../common/keyed-writes.js';
import type { Work } from '../common/work.js';
import type { WriteCondition } from './write-conditions.js';

export interface Todo {
  readonly id: number;
  readonly title: string;
  readonly done: boolean;
}

/**
 * An item as stored, with its version: a number from the database's one counter, new at every
 * write of the item and never given to another state of any item (write-conditions.ts).
 */
export interface StoredTodo extends Todo {
  readonly version: number;
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

/**
 * A create's outcome: the id it took and the item's version, or none left (D11), in which case
 * nothing was stored. `version` is absent only from a keyed create recorded before versions
 * existed.
 */
export type CreateOutcome =
  | { readonly kind: 'created'; readonly id: number; readonly version?: number }
  | { readonly kind: 'no-id-left' };

/** The write's condition was not met (`stale`), or it named no version where one is required: nothing changed. */
export type Refused = { readonly kind: 'stale' } | { readonly kind: 'version-required' };

export type ReplaceOutcome =
  { readonly kind: 'replaced' | 'created'; readonly todo: StoredTodo } | Refused;

export type RemoveOutcome = { readonly kind: 'removed' } | { readonly kind: 'missing' } | Refused;

export type FinishOutcome =
  | { readonly kind: 'finished'; readonly todo: StoredTodo }
  | { readonly kind: 'missing' }
  | { readonly kind: 'already-done' }
  | Refused;

export interface TodoStore {
  // Each verb that starts work takes, last, the Work it is done for (src/common/work.ts): its
  // deadline gives up what has not started, its origin tells a tracer whose batch it joined.
  /** At once where the store can read without waiting (SQLite): see Eventually. */
  get(id: number, work: Work): Eventually<StoredTodo | undefined>;
  // Each write takes an Idempotency-Key or none (undefined). Under a key it runs only if the key
  // has no live record, and its outcome, a refusal included, is recorded with the key in the same
  // transaction as the write (its condition judged there too): a recorded outcome is the one its
  // first run answered, so a replay carries the version of its first response. Without a key it
  // always runs: its outcome comes back as `ran`.
  /** Creates with id = largest existing id + 1 (1 when empty), unless that is past TODO_ID_MAX. */
  create(
    input: TodoInput,
    key: KeyedWrite | undefined,
    work: Work,
  ): Promise<KeyedOutcome<CreateOutcome>>;
  /**
   * Replaces the item, or creates it under that id; says which. The condition (UNCONDITIONAL: none)
   * is judged first, in the same transaction as the write.
   */
  replace(
    id: number,
    input: TodoInput,
    condition: WriteCondition,
    key: KeyedWrite | undefined,
    work: Work,
  ): Promise<KeyedOutcome<ReplaceOutcome>>;
  /** A missing item is `missing` whatever the condition: there was nothing the condition could protect. */
  remove(
    id: number,
    condition: WriteCondition,
    key: KeyedWrite | undefined,
    work: Work,
  ): Promise<KeyedOutcome<RemoveOutcome>>;
  /** Missing and already done come before the condition, as for remove. */
  finish(
    id: number,
    condition: WriteCondition,
    key: KeyedWrite | undefined,
    work: Work,
  ): Promise<KeyedOutcome<FinishOutcome>>;
  /** Deletes a bounded batch of key records recorded before `expiredBeforeMs`; returns how many. */
  pruneKeys(expiredBeforeMs: number): Promise<number>;
  /** True when the database answers (for /readyz). */
  ping(): Promise<boolean>;
  close(): Promise<void>;
}
