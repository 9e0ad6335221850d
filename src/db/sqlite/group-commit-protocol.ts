// The messages between a store (main thread) and its group-commit worker thread.

export interface GroupCommitSetup {
  /** A database file; `:memory:` cannot be shared with a worker. */
  readonly location: string;
  readonly synchronous: 'FULL' | 'OFF';
}

export type ToWriter<Op> =
  | { readonly kind: 'batch'; readonly batch: number; readonly ops: readonly Op[] }
  | { readonly kind: 'close' };

/** An operation of a committed batch that failed alone: its place in the batch, and its error. */
export interface OpFailure {
  readonly index: number;
  readonly message: string;
  readonly code: string | undefined;
}

/**
 * A committed batch answers each operation's outcome in its place, bare: every object a message
 * holds is copied field by field between threads, and operations almost never fail. The few that
 * did are listed apart, by place (their place in `outcomes` holds nothing).
 */
export type FromWriter<Outcome> =
  | {
      readonly kind: 'committed';
      readonly batch: number;
      readonly outcomes: readonly (Outcome | undefined)[];
      readonly failures?: readonly OpFailure[];
    }
  | {
      readonly kind: 'failed';
      readonly batch: number;
      readonly message: string;
      readonly code: string | undefined;
    };

export function errorCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
