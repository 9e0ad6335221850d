// The to-do store's four writes as both databases take them: one TodoWrite type (what travels to
// the SQLite writer thread or into a PostgreSQL batch), one result type (what either answers of a
// write), and one mapper per write from that result to the store's outcome (store.ts). The store
// verbs built here (todoWrites) are the same on both databases: each takes its optional
// Idempotency-Key, and a database's scaffold runs the write under it or not.
import type { KeyedOutcome, KeyedWrite } from '../common/keyed-writes.js';
import type { Work } from '../common/work.js';
import type {
  CreateOutcome,
  FinishOutcome,
  RemoveOutcome,
  ReplaceOutcome,
  StoredTodo,
  TodoStore,
} from './store.js';
import { decodeTitle, encodeTitle } from './title.js';
import type { WriteCondition } from './write-conditions.js';

/** A write as it travels to the database: titles encoded (title.ts). */
export type TodoWrite =
  | { readonly kind: 'create'; readonly title: string; readonly done: boolean }
  | {
      readonly kind: 'replace';
      readonly id: number;
      readonly title: string;
      readonly done: boolean;
      readonly condition: WriteCondition;
    }
  | { readonly kind: 'remove'; readonly id: number; readonly condition: WriteCondition }
  | { readonly kind: 'finish'; readonly id: number; readonly condition: WriteCondition };

/**
 * A write's share of a batch's byte bound: its encoded title (at most 3 UTF-8 bytes a UTF-16 unit)
 * and the rest.
 */
export const todoWriteSize = (write: TodoWrite): number =>
  ('title' in write ? write.title.length * 3 : 0) + 32;

/**
 * What a database answers of one write: the kind of its outcome (created, replaced, removed,
 * finished, missing, already-done, stale, version-required, no-id-left) and what that outcome
 * needs of the row: a create's new id, the version the write gave the item, a finish's stored
 * (encoded) title. PostgreSQL's BIGINTs come as text.
 */
export interface TodoWriteResult {
  readonly outcome: string;
  readonly id?: number | string | null;
  readonly title?: string | null;
  readonly version?: number | string | null;
}

/** What each write's outcome is. */
export interface TodoOutcomes {
  readonly create: CreateOutcome;
  readonly replace: ReplaceOutcome;
  readonly remove: RemoveOutcome;
  readonly finish: FinishOutcome;
}
export type TodoOutcome = TodoOutcomes[keyof TodoOutcomes];

const absent = (value: unknown): value is null | undefined => value === undefined || value === null;

const refused = (outcome: string): outcome is 'stale' | 'version-required' =>
  outcome === 'stale' || outcome === 'version-required';

function answered(write: TodoWrite, { outcome }: TodoWriteResult): Error {
  return new Error(`the database answered a ${write.kind} with ${outcome}`);
}

function createdOutcome(write: TodoWrite, result: TodoWriteResult): CreateOutcome {
  const { outcome, id, version } = result;
  if (outcome === 'no-id-left') return { kind: 'no-id-left' };
  if (outcome !== 'created' || absent(id) || absent(version)) throw answered(write, result);
  return { kind: 'created', id: Number(id), version: Number(version) };
}

/** The item as the write left it: the request's own title and done, under the version it took. */
function replacedOutcome(
  write: Extract<TodoWrite, { kind: 'replace' }>,
  result: TodoWriteResult,
): ReplaceOutcome {
  const { outcome, version } = result;
  if (refused(outcome)) return { kind: outcome };
  if ((outcome !== 'replaced' && outcome !== 'created') || absent(version))
    throw answered(write, result);
  const { id, title, done } = write;
  return { kind: outcome, todo: { id, title: decodeTitle(title), done, version: Number(version) } };
}

function removedOutcome(write: TodoWrite, result: TodoWriteResult): RemoveOutcome {
  const { outcome } = result;
  if (outcome === 'removed' || outcome === 'missing' || refused(outcome)) return { kind: outcome };
  throw answered(write, result);
}

/** The finished item as stored: its stored title, done, under the version it took. */
function finishedOutcome(
  write: Extract<TodoWrite, { kind: 'finish' }>,
  result: TodoWriteResult,
): FinishOutcome {
  const { outcome, title, version } = result;
  if (outcome === 'missing' || outcome === 'already-done' || refused(outcome))
    return { kind: outcome };
  if (outcome !== 'finished' || absent(title) || absent(version)) throw answered(write, result);
  const todo: StoredTodo = {
    id: write.id,
    title: decodeTitle(title),
    done: true,
    version: Number(version),
  };
  return { kind: 'finished', todo };
}

/**
 * A write's outcome, read from what the database answered: on the main thread for a write without
 * a key, where it runs and its outcome is recorded for one with a key (the SQLite writer thread,
 * a PostgreSQL batch).
 */
export function todoOutcome(write: TodoWrite, result: TodoWriteResult): TodoOutcome {
  switch (write.kind) {
    case 'create':
      return createdOutcome(write, result);
    case 'replace':
      return replacedOutcome(write, result);
    case 'remove':
      return removedOutcome(write, result);
    case 'finish':
      return finishedOutcome(write, result);
  }
}

/** How a database's scaffold runs a write, under a key or not. */
export type RunTodoWrite = (
  write: TodoWrite,
  key: KeyedWrite | undefined,
  work: Work,
) => Promise<KeyedOutcome<TodoOutcome>>;

/** The store's four writes, on either database: each is one TodoWrite, run by `run`. */
export function todoWrites(
  run: RunTodoWrite,
): Pick<TodoStore, 'create' | 'replace' | 'remove' | 'finish'> {
  // The outcome `run` answers is the one todoOutcome reads for the write's kind.
  const as = <K extends keyof TodoOutcomes>(
    written: Promise<KeyedOutcome<TodoOutcome>>,
  ): Promise<KeyedOutcome<TodoOutcomes[K]>> => written as Promise<KeyedOutcome<TodoOutcomes[K]>>;
  return {
    create: (input, key, work) =>
      as<'create'>(
        run({ kind: 'create', title: encodeTitle(input.title), done: input.done }, key, work),
      ),
    replace: (id, input, condition, key, work) =>
      as<'replace'>(
        run(
          { kind: 'replace', id, title: encodeTitle(input.title), done: input.done, condition },
          key,
          work,
        ),
      ),
    remove: (id, condition, key, work) =>
      as<'remove'>(run({ kind: 'remove', id, condition }, key, work)),
    finish: (id, condition, key, work) =>
      as<'finish'>(run({ kind: 'finish', id, condition }, key, work)),
  };
}
