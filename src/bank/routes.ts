// The bank endpoints. Three of them fail on purpose, so that every error path can be seen.
import { defineRoute, jsonReply, type Route } from '../http/route.js';
import type { Ledger } from './ledger.js';
import {
  accountJson,
  accountNotFound,
  accountParam,
  amountParam,
  CRASH_SECRET,
  limitsHidden,
  loginNeeded,
  NotEnoughMoneyError,
} from './model.js';

export function bankRoutes(ledger: Ledger): Route[] {
  return [
    defineRoute({
      method: 'GET',
      path: '/accounts/{account}',
      status: 200,
      params: { account: accountParam },
      docs: { name: 'read_account' },
      async handle({ params }) {
        const balance = await ledger.balance(params.account);
        if (balance === undefined) throw accountNotFound(params.account);
        return jsonReply(200, accountJson(params.account, balance));
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/secret',
      status: 200,
      params: {},
      docs: { name: 'secret' },
      handle() {
        throw loginNeeded();
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/accounts/{account}/limits',
      status: 200,
      params: { account: accountParam },
      docs: { name: 'limits' },
      // As in the reference, the account is not looked up: the answer is the same for any name.
      handle() {
        throw limitsHidden();
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/withdraw/{account}/{amount}',
      status: 200,
      params: { account: accountParam, amount: amountParam },
      docs: { name: 'withdraw' },
      async handle({ params }) {
        const outcome = await ledger.withdraw(params.account, params.amount);
        switch (outcome.kind) {
          case 'done':
            return jsonReply(200, accountJson(params.account, outcome.balance));
          case 'unknown-account':
            throw accountNotFound(params.account);
          case 'insufficient':
            throw new NotEnoughMoneyError(params.account, outcome.balance, params.amount);
        }
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/crash',
      status: 200,
      params: {},
      docs: { name: 'crash' },
      handle() {
        throw new Error(`deliberate failure; internal state: ${CRASH_SECRET}`);
      },
    }),
  ];
}
