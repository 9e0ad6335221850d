// What the bank routes need from storage. A withdrawal is one atomic step that checks and takes
// the money together: no overdraft and no lost update, whatever the concurrency. Every withdrawal
// that takes money appends a row to the withdrawal journal in the same step, so that for every
// account the initial balance minus the sum of its journal is its balance.
import type { Eventually } from '../common/eventually.js';
import type { KeyedOutcome, KeyedWrite } from '../common/keyed-writes.js';
import type { Work } from '../common/work.js';

export type WithdrawOutcome =
  | { readonly kind: 'done'; readonly balance: number }
  | { readonly kind: 'unknown-account' }
  | { readonly kind: 'insufficient'; readonly balance: number };

/** One withdrawal, as it waits in a group-commit batch. */
export interface Withdrawal {
  readonly account: string;
  readonly amount: number;
}

/** A withdrawal's share of a batch's byte bound: its account name and amount on the wire. */
export const withdrawalSize = (w: Withdrawal): number => w.account.length * 3 + 16;

export interface Ledger {
  // As a TodoStore's (src/todo/store.ts), each verb that starts work takes its Work last.
  /** Undefined for an unknown account. At once where the store can read without waiting (SQLite): see Eventually. */
  balance(account: string, work: Work): Eventually<number | undefined>;
  /**
   * A withdrawal, under an Idempotency-Key or none (undefined). Under a key it runs only if the key
   * has no live record, and its outcome is recorded with the key in the same transaction; without
   * one it always runs, its outcome coming back as `ran`.
   */
  withdraw(
    account: string,
    amount: number,
    key: KeyedWrite | undefined,
    work: Work,
  ): Promise<KeyedOutcome<WithdrawOutcome>>;
  /** Deletes a bounded batch of key records recorded before `expiredBeforeMs`; returns how many. */
  pruneKeys(expiredBeforeMs: number): Promise<number>;
  ping(): Promise<boolean>;
  close(): Promise<void>;
}
