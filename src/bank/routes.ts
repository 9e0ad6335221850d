// The bank endpoints. Three of them fail on purpose, so that every error path can be seen.
// Each documents exactly the responses it gives (D10), in the active error format.
import { andThen } from '../common/eventually.js';
import { conditionalRead, preconditionFailed } from '../http/conditions.js';
import { serviceUnavailable } from '../http/errors.js';
import {
  defineRoute,
  jsonReply,
  type DocumentedError,
  type Reply,
  type Route,
} from '../http/route.js';
import type { Ledger, WithdrawOutcome } from './ledger.js';
import {
  accountJson,
  accountNotFound,
  accountParam,
  amountParam,
  CRASH_SECRET,
  limitsHidden,
  loginNeeded,
  notEnoughMoney,
} from './model.js';

const unknownAccount: DocumentedError = {
  description: 'No account with this name',
  error: accountNotFound('carol'),
};
/** The operations that read or write the ledger answer 503 while it is away. */
const ledgerAway = serviceUnavailable();

/** A withdrawal's answer, the first time and on every replay. */
function withdrawalReply(
  { params }: { readonly params: { readonly account: string; readonly amount: number } },
  outcome: WithdrawOutcome,
): Reply {
  switch (outcome.kind) {
    case 'done':
      return jsonReply(200, accountJson(params.account, outcome.balance));
    case 'unknown-account':
      throw accountNotFound(params.account);
    case 'insufficient':
      throw notEnoughMoney(outcome.balance, params.amount);
  }
}

/**
 * A balance's entity tag: the balance itself. The path names the account, so the balance alone
 * fixes the representation to the byte; a strong tag, then, without hashing the body.
 */
const balanceTag = (balance: number): string => `"${balance}"`;

export function bankRoutes(ledger: Ledger): Route[] {
  return [
    readAccountRoute(ledger),
    secretRoute(),
    limitsRoute(),
    withdrawRoute(ledger),
    crashRoute(),
  ];
}

/** GET /accounts/{account}: the balance, its entity tag judged against the conditions. */
function readAccountRoute(ledger: Ledger): Route {
  return defineRoute({
    method: 'GET',
    path: '/accounts/{account}',
    status: 200,
    params: { account: accountParam },
    docs: {
      name: 'read_account',
      responseModel: 'Account',
      example: accountJson('alice', 100),
      responses: [unknownAccount],
      tagged: 'read',
      otherErrors: [preconditionFailed(), ledgerAway],
    },
    handle: ({ params, preconditions }, work) =>
      andThen(ledger.balance(params.account, work), (balance) => {
        if (balance === undefined) throw accountNotFound(params.account);
        const etag = balanceTag(balance);
        return conditionalRead(preconditions, etag, {
          status: 200,
          body: accountJson(params.account, balance),
          etag,
        });
      }),
  });
}

/** GET /secret: always 401, with the header that says how to log in. */
function secretRoute(): Route {
  return defineRoute({
    method: 'GET',
    path: '/secret',
    status: 200,
    params: {},
    docs: {
      name: 'secret',
      succeeds: false,
      responses: [
        {
          description: 'Login needed',
          error: loginNeeded(),
          headers: { 'WWW-Authenticate': 'The scheme to log in with: Bearer' },
        },
      ],
    },
    handle() {
      throw loginNeeded();
    },
  });
}

/** GET /accounts/{account}/limits: always 403. */
function limitsRoute(): Route {
  return defineRoute({
    method: 'GET',
    path: '/accounts/{account}/limits',
    status: 200,
    params: { account: accountParam },
    docs: {
      name: 'limits',
      succeeds: false,
      responses: [{ description: 'Only managers can see limits', error: limitsHidden() }],
    },
    // As in the reference, the account is not looked up: the response is the same for any name.
    handle() {
      throw limitsHidden();
    },
  });
}

/** POST /withdraw/{account}/{amount}. */
function withdrawRoute(ledger: Ledger): Route {
  return defineRoute({
    method: 'POST',
    path: '/withdraw/{account}/{amount}',
    status: 200,
    params: { account: accountParam, amount: amountParam },
    docs: {
      name: 'withdraw',
      responseModel: 'Account',
      example: accountJson('bob', 2),
      responses: [
        unknownAccount,
        // Insufficient funds: 400 NOT_ENOUGH_MONEY in the unified format, an unhandled 500 in the
        // default one.
        { description: 'The balance is smaller than the amount', error: notEnoughMoney(5, 10) },
      ],
      otherErrors: [ledgerAway],
    },
    idempotent: {
      write: ({ params }, key, work) => ledger.withdraw(params.account, params.amount, key, work),
      reply: withdrawalReply,
    },
  });
}

/** GET /crash: always an unhandled failure, whose message must not reach the client. */
function crashRoute(): Route {
  return defineRoute({
    method: 'GET',
    path: '/crash',
    status: 200,
    params: {},
    docs: {
      name: 'crash',
      succeeds: false,
      responses: [
        { description: 'Always an unhandled failure', error: new Error('deliberate failure') },
      ],
    },
    handle() {
      throw new Error(`deliberate failure; internal state: ${CRASH_SECRET}`);
    },
  });
}
