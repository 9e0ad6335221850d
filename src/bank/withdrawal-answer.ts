// The answer a keyed withdrawal records with its write: the same status, headers and bytes as the
// route gives an unkeyed one, rendered by the one error renderer in the active format. The ledger
// computes it inside the write's transaction (on SQLite in the writer thread, which receives the
// format with the write), so it is a pure function of plain data.
import type { StoredAnswer } from '../db/idempotency-records.js';
import { JSON_TYPE, renderError, type ErrorFormat } from '../http/render.js';
import type { WithdrawOutcome } from './ledger.js';
import { accountJson, accountNotFound, NotEnoughMoneyError } from './model.js';

export function withdrawalAnswer(format: ErrorFormat, account: string, amount: number, outcome: WithdrawOutcome): StoredAnswer {
  if (outcome.kind === 'done') return { status: 200, contentType: JSON_TYPE, headers: {}, body: accountJson(account, outcome.balance) };
  const error = outcome.kind === 'unknown-account' ? accountNotFound(account) : new NotEnoughMoneyError(account, outcome.balance, amount);
  const rendered = renderError(error, format);
  return { status: rendered.status, contentType: rendered.contentType, headers: rendered.headers, body: rendered.body };
}

