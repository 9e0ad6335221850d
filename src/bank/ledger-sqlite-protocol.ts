// The messages between the ledger (main thread) and its group-commit worker. Outcomes travel as
// two typed arrays, so that a batch's answer is one small transfer and not an object per withdrawal.
import type { WithdrawOutcome } from './ledger.js';

export interface WorkerSetup {
  readonly location: string;
  readonly synchronous: 'FULL' | 'OFF';
}

export type ToWorker =
  | { readonly kind: 'batch'; readonly batch: number; readonly accounts: readonly string[]; readonly amounts: readonly number[] }
  | { readonly kind: 'close' };

export type FromWorker =
  | { readonly kind: 'committed'; readonly batch: number; readonly codes: Uint8Array<ArrayBuffer>; readonly balances: Float64Array<ArrayBuffer> }
  | { readonly kind: 'failed'; readonly batch: number; readonly message: string; readonly code: string | undefined };

const DONE = 0;
const UNKNOWN_ACCOUNT = 1;
const INSUFFICIENT = 2;

export function encodeOutcome(outcome: WithdrawOutcome, codes: Uint8Array, balances: Float64Array, index: number): void {
  switch (outcome.kind) {
    case 'done':
      codes[index] = DONE;
      balances[index] = outcome.balance;
      return;
    case 'unknown-account':
      codes[index] = UNKNOWN_ACCOUNT;
      return;
    case 'insufficient':
      codes[index] = INSUFFICIENT;
      balances[index] = outcome.balance;
      return;
  }
}

export function decodeOutcome(codes: Uint8Array, balances: Float64Array, index: number): WithdrawOutcome {
  const code = codes[index];
  const balance = balances[index] as number;
  if (code === DONE) return { kind: 'done', balance };
  if (code === UNKNOWN_ACCOUNT) return { kind: 'unknown-account' };
  if (code === INSUFFICIENT) return { kind: 'insufficient', balance };
  throw new Error(`unknown withdrawal outcome code ${String(code)} at ${index}`);
}
