// The messages between a store (main thread) and its group-commit worker thread.

export interface GroupCommitSetup {
  /** A database file; `:memory:` cannot be shared with a worker. */
  readonly location: string;
  readonly synchronous: 'FULL' | 'OFF';
}

export type ToWriter<Op> =
  | { readonly kind: 'batch'; readonly batch: number; readonly ops: readonly Op[] }
  | { readonly kind: 'close' };

/** One operation's result inside a committed batch: its outcome, or the error that undid it alone. */
export type OpResult<Outcome> =
  | { readonly ok: true; readonly outcome: Outcome }
  | { readonly ok: false; readonly message: string; readonly code: string | undefined };

export type FromWriter<Outcome> =
  | {
      readonly kind: 'committed';
      readonly batch: number;
      readonly results: readonly OpResult<Outcome>[];
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
