// The bank's resource, inputs and errors. Insufficient funds is a business rule, so it is a
// DomainError: the default format does not recognise it (500), the others give 400.
import { CodedError, DomainError, HttpError } from '../http/errors.js';
import { intParam, SAFE_INT_MAX, strParam, type JsonSchema } from '../http/schema.js';

export const INITIAL_ACCOUNTS: ReadonlyMap<string, number> = new Map([
  ['alice', 100],
  ['bob', 5],
]);

export const accountParam = strParam('Account');
/** D1: a withdrawal takes at least 1; D2: at most the largest exact integer. */
export const amountParam = intParam({ title: 'Amount', gt: 0, le: SAFE_INT_MAX });

/** The success body of a read and of a withdrawal, as documented. */
export const ACCOUNT_SCHEMA: JsonSchema = {
  properties: { account: { type: 'string', title: 'Account' }, balance: { type: 'integer', title: 'Balance' } },
  type: 'object',
  required: ['account', 'balance'],
  title: 'Account',
};

export function accountJson(account: string, balance: number): string {
  return `{"account":${JSON.stringify(account)},"balance":${balance}}`;
}

export class NotEnoughMoneyError extends DomainError {
  readonly code = 'NOT_ENOUGH_MONEY';
  constructor(
    readonly account: string,
    readonly balance: number,
    readonly wanted: number,
  ) {
    super(`account ${account} holds ${balance}, ${wanted} was asked for`);
    this.name = 'NotEnoughMoneyError';
  }
  get publicMessage(): string {
    return `Balance is ${this.balance}, you asked for ${this.wanted}`;
  }
}

export const accountNotFound = (account: string): HttpError => new HttpError('HTTP_404', `Account ${account} not found`);
export const loginNeeded = (): HttpError => new HttpError('HTTP_401', 'Login needed', { 'WWW-Authenticate': 'Bearer' });
export const limitsHidden = (): CodedError => new CodedError('LIMITS_HIDDEN');

/** /crash fails with this in its message, so that tests can prove it never reaches a client. */
export const CRASH_SECRET = 'db-password=hunter2';
