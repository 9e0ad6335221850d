// Clients that retry safely: each sends a keyed withdrawal and, after a lost connection, a 503 or a
// 409, sends the very same request again (same key), to whichever instance is up, until it gets a
// definitive answer. Then the checks every such run ends with: balances, books, replays, reuse.
import assert from 'node:assert/strict';
import { get, json, send, type RawResponse } from './http.js';
import { runBounded, seededRandom } from './load.js';

export interface PlannedWithdrawal {
  readonly key: string;
  readonly account: string;
  readonly amount: number;
}

export interface Definitive {
  readonly status: number;
  readonly text: string;
}

/** Statuses after which the same request is sent again: nothing, or something unknown, happened. */
const RETRY_STATUSES = new Set([409, 503]);
/** A client's pause before a retry: the Retry-After of a 409 or 503 is a second, scaled down for a test. */
const RETRY_PAUSE_MS = 20;
const ATTEMPTS_MAX = 2_000;

export function planWithdrawals(
  count: number,
  accounts: readonly string[],
  seed: number,
  label: string,
): PlannedWithdrawal[] {
  const random = seededRandom(seed);
  return Array.from({ length: count }, (_, i) => ({
    key: `"${label}-${seed}-${i}"`,
    account: accounts[random(0, accounts.length - 1)] as string,
    amount: random(1, 60),
  }));
}

const pathOf = (w: PlannedWithdrawal, amount = w.amount): string =>
  `/withdraw/${w.account}/${amount}`;
export const sendKeyed = (
  url: string,
  w: PlannedWithdrawal,
  amount?: number,
): Promise<RawResponse> =>
  send(url, { method: 'POST', path: pathOf(w, amount), headers: [['Idempotency-Key', w.key]] });

/**
 * Sends every planned withdrawal until it is answered definitively; `urls()` is read at each
 * attempt, so that an instance restarted on another port is found. Returns the answers, and how
 * many retries.
 */
export async function withdrawUntilDefinitive(
  plan: readonly PlannedWithdrawal[],
  clients: number,
  urls: () => readonly string[],
): Promise<{ answers: Definitive[]; retries: number }> {
  let retries = 0;
  const answers = await runBounded(plan.length, clients, async (index) => {
    const withdrawal = plan[index] as PlannedWithdrawal;
    for (let attempt = 0; attempt < ATTEMPTS_MAX; attempt++) {
      const live = urls();
      const url = live[(index + attempt) % live.length] as string;
      let answer: RawResponse | undefined;
      try {
        answer = await sendKeyed(url, withdrawal);
      } catch {
        answer = undefined; // the connection failed or the answer was lost: unknown, so send it again
      }
      if (answer !== undefined && !RETRY_STATUSES.has(answer.status)) {
        assert.ok(
          answer.status === 200 || answer.status === 400,
          `withdrawal ${withdrawal.key} answered ${answer.status}: ${answer.text}`,
        );
        return { status: answer.status, text: answer.text };
      }
      retries += 1;
      await new Promise((resolve) => setTimeout(resolve, RETRY_PAUSE_MS));
    }
    throw new Error(
      `withdrawal ${withdrawal.key} got no definitive answer in ${ATTEMPTS_MAX} attempts`,
    );
  });
  return { answers, retries };
}

/**
 * What must hold at the end: every balance is the initial one minus the withdrawals answered 200;
 * every request sent once more replays its status and body with Idempotent-Replayed: true; and each
 * key sent with another amount is 422 and changes nothing.
 */
export async function assertExactlyOnce(
  url: string,
  initial: ReadonlyMap<string, number>,
  plan: readonly PlannedWithdrawal[],
  answers: readonly Definitive[],
): Promise<void> {
  const expected = new Map(initial);
  plan.forEach((w, i) => {
    if ((answers[i] as Definitive).status === 200)
      expected.set(w.account, (expected.get(w.account) ?? Number.NaN) - w.amount);
  });
  const balances = async (): Promise<Map<string, number>> => {
    const found = new Map<string, number>();
    for (const name of initial.keys())
      found.set(name, (json(await get(url, `/accounts/${name}`)) as { balance: number }).balance);
    return found;
  };
  assert.deepEqual(await balances(), expected, 'balance = initial − the withdrawals answered 200');

  await runBounded(plan.length, 16, async (i) => {
    const w = plan[i] as PlannedWithdrawal;
    const first = answers[i] as Definitive;
    const replay = await sendKeyed(url, w);
    assert.equal(replay.status, first.status, `replay of ${w.key}`);
    assert.equal(replay.text, first.text, `replay of ${w.key}: the same body`);
    assert.equal(replay.headers['idempotent-replayed'], 'true', `replay of ${w.key}`);
    const reused = await sendKeyed(url, w, w.amount + 1);
    assert.equal(reused.status, 422, `${w.key} with another amount`);
    assert.equal(
      (json(reused) as { error: { code: string } }).error.code,
      'IDEMPOTENCY_KEY_REUSED',
    );
  });
  assert.deepEqual(await balances(), expected, 'replays and reused keys changed nothing');
}
