// The bank's resource, inputs and errors. Insufficient funds is a business rule that the default
// format does not recognise (its catalogue entry says so: a 500 there), while the others give 400.
import { ApiError } from '../http/errors.js';
import { intParam, SAFE_INT_MAX, strParam, type JsonSchema } from '../http/validation/schema.js';

export const INITIAL_ACCOUNTS: ReadonlyMap<string, number> = new Map([
  ['alice', 100],
  ['bob', 5],
]);

export const accountParam = strParam('Account');
/** D1: a withdrawal takes at least 1; D2: at most the largest exact integer. */
export const amountParam = intParam({ title: 'Amount', gt: 0, le: SAFE_INT_MAX });

/** The success body of a read and of a withdrawal, as documented. */
export const ACCOUNT_SCHEMA: JsonSchema = {
  properties: {
    account: { type: 'string', title: 'Account' },
    balance: { type: 'integer', title: 'Balance' },
  },
  type: 'object',
  required: ['account', 'balance'],
  title: 'Account',
};

export function accountJson(account: string, balance: number): string {
  return `{"account":${JSON.stringify(account)},"balance":${balance}}`;
}

/** Insufficient funds: the message names the balance and the amount asked for. */
export const notEnoughMoney = (balance: number, wanted: number): ApiError =>
  new ApiError('NOT_ENOUGH_MONEY', { message: `Balance is ${balance}, you asked for ${wanted}` });

export const accountNotFound = (account: string): ApiError =>
  new ApiError('HTTP_404', { message: `Account ${account} not found` });
export const loginNeeded = (): ApiError =>
  new ApiError('HTTP_401', { message: 'Login needed', headers: { 'WWW-Authenticate': 'Bearer' } });
export const limitsHidden = (): ApiError => new ApiError('LIMITS_HIDDEN');

/** /crash fails with this in its message, so that tests can prove it never reaches a client. */
export const CRASH_SECRET = 'db-password=hunter2';
