// What the to-do routes need from storage. Each method is one atomic step: no caller ever reads
// and then writes, so that concurrent requests (and several instances) cannot interleave badly.
import type { Todo, TodoInput } from './model.js';

export type FinishOutcome =
  | { readonly kind: 'finished'; readonly todo: Todo }
  | { readonly kind: 'missing' }
  | { readonly kind: 'already-done' };

export interface TodoStore {
  get(id: number): Promise<Todo | undefined>;
  /** Creates with id = largest existing id + 1 (1 when empty). */
  create(input: TodoInput): Promise<Todo>;
  /** Replaces the item, or creates it under that id; says which. */
  replace(id: number, input: TodoInput): Promise<{ readonly todo: Todo; readonly created: boolean }>;
  /** True when an item was removed. */
  remove(id: number): Promise<boolean>;
  finish(id: number): Promise<FinishOutcome>;
  /** True when the database answers (for /readyz). */
  ping(): Promise<boolean>;
  close(): Promise<void>;
}
