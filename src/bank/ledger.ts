// What the bank routes need from storage. A withdrawal is one atomic step that checks and takes
// the money together: no overdraft and no lost update, whatever the concurrency.

export type WithdrawOutcome =
  | { readonly kind: 'done'; readonly balance: number }
  | { readonly kind: 'unknown-account' }
  | { readonly kind: 'insufficient'; readonly balance: number };

export interface Ledger {
  /** Undefined for an unknown account. */
  balance(account: string): Promise<number | undefined>;
  withdraw(account: string, amount: number): Promise<WithdrawOutcome>;
  ping(): Promise<boolean>;
  close(): Promise<void>;
}
