// What the bank routes need from storage. A withdrawal is one atomic step that checks and takes
// the money together: no overdraft and no lost update, whatever the concurrency.

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
  /** Undefined for an unknown account. */
  balance(account: string): Promise<number | undefined>;
  withdraw(account: string, amount: number): Promise<WithdrawOutcome>;
  ping(): Promise<boolean>;
  close(): Promise<void>;
}
