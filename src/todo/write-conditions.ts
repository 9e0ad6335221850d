// What a write may ask of the item's current version before it changes anything, and how that is
// judged. The judgement runs inside the write's own transaction (SQLite's writer, PostgreSQL's
// todo_write_batch says the same in SQL), so no other write can come between the check and the
// change. Versions come from one counter per database that only grows (store-sqlite-schema.ts,
// store-postgres.ts): an id used again after a delete never gets a version it had before.

/** Versions a condition names: any version at all (the item exists), or one of these. */
export type VersionSet = 'any' | readonly number[];

export type WriteCondition =
  /** Change whatever is there. */
  | { readonly kind: 'none' }
  /** No version named, and one is required to change an item that exists (absent: the write goes on). */
  | { readonly kind: 'required' }
  /**
   * `ifMatch`: the item must exist and hold one of these versions. `ifNoneMatch`: it must not
   * exist (`any`), or not hold any of these versions. Either may be absent; both are checked.
   */
  | {
      readonly kind: 'versions';
      readonly ifMatch: VersionSet | undefined;
      readonly ifNoneMatch: VersionSet | undefined;
    };

export const UNCONDITIONAL: WriteCondition = { kind: 'none' };

/** What a condition says of an item whose current version is `current` (undefined: no such item). */
export type Judgement = 'go' | 'stale' | 'version-required';

export function judge(condition: WriteCondition, current: number | undefined): Judgement {
  switch (condition.kind) {
    case 'none':
      return 'go';
    case 'required':
      return current === undefined ? 'go' : 'version-required';
    case 'versions': {
      const { ifMatch, ifNoneMatch } = condition;
      if (ifMatch !== undefined && (current === undefined || !holds(ifMatch, current)))
        return 'stale';
      if (ifNoneMatch !== undefined && current !== undefined && holds(ifNoneMatch, current))
        return 'stale';
      return 'go';
    }
  }
}

function holds(versions: VersionSet, current: number): boolean {
  return versions === 'any' || versions.includes(current);
}
