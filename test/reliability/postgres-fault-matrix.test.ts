// Every fault of PostgreSQL × deadlines on and off × every kind of work, against real service
// processes behind a TCP proxy the test controls (test/support/tcp-proxy.ts). In every cell: the
// process lives; every answer is a success, or a 503 or 504 with Retry-After; a keyed write retried
// under its key is applied once; /readyz says not ready while the database is away; and every kind
// of work succeeds again within 2 s of the database coming back. docs/storage.md has the table.
//
// The cells run together: per deadline setting one bank (reads, batched reads, writes, keyed
// writes) and one to-do with its rate limits held in PostgreSQL (rate-limit decisions, which ride
// in its reads' statements: src/db/postgres/ride-along.ts), all five kinds of work at once, and the faults
// one after the other. Windows are short: longer than the
// bounds they must outlast (--deadline-ms, the pool wait, the client's 2 s query time-out).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { get, send, type RawResponse } from '../support/http.js';
import {
  createTestDatabase,
  databaseNameOf,
  postgresSkip,
  TEST_DATABASE_URL,
  type TestDatabase,
} from '../support/postgres.js';
import { startServiceProcess, type ServiceProcess } from '../support/service-process.js';
import { processSuiteUnless } from '../support/suite.js';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.js';

const skip = await postgresSkip();

/**
 * Short, yet past the readiness check's own 1 s bound (PING_TIMEOUT_MS), so that /readyz answers
 * its 503 rather than a 504; and below the client's 2 s query time-out, so deadlines fire first.
 */
const DEADLINE_MS = 1_500;
/** Longer than the deadline, the pool wait and the client's query time-out (2 s), so each is met. */
const WINDOW_MS = 3_000;
/** A server restart: the port refused this long. */
const RESTART_MS = 2_000;
const RECOVERY_BOUND_MS = 2_000;
/** Work goes on this long past the recovery bound, to see that everything succeeds again. */
const SETTLE_MS = 800;
/** Between two requests of one kind of work: about 40 a second each, as a modest real load. */
const PAUSE_MS = 25;
const BATCH_READS = 8;
const KEYED_RETRY_MS = 50;
/** A keyed write still unanswered after the fault has this long to be applied, via its retries. */
const KEYED_FINISH_MS = 10_000;

const START = 1_000_000;
const ACCOUNTS = [
  'reader=1',
  `writer=${START}`,
  `keyed=${START}`,
  ...Array.from({ length: BATCH_READS }, (_, i) => `b${i}=1`),
].join(',');
const UNLIMITED = 'reads=100000/s:100000,writes=100000/s:100000';

type Work = 'reads' | 'batched reads' | 'writes' | 'keyed writes' | 'rate-limit decisions';
const WORKS: readonly Work[] = [
  'reads',
  'batched reads',
  'writes',
  'keyed writes',
  'rate-limit decisions',
];

interface Answer {
  readonly setting: string;
  readonly work: Work;
  readonly status: number;
  readonly retryAfter: string | undefined;
  readonly text: string;
  readonly startedMs: number;
  readonly endedMs: number;
}

interface Setting {
  readonly name: string;
  readonly database: TestDatabase;
  readonly bank: ServiceProcess;
  /** With --rate-limit: every request is decided by the limiter in PostgreSQL first. */
  readonly todo: ServiceProcess;
  /** Keyed writes answered 200 so far, each once; unkeyed writes answered 200, and sent. */
  keyedApplied: number;
  writesOk: number;
  writesSent: number;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const now = (): number => performance.now();
const success = (status: number): boolean => status >= 200 && status < 300;

/** The answer, or status 0 when none came (the connection refused or cut: the process is gone). */
async function timed(
  setting: string,
  work: Work,
  call: () => Promise<RawResponse>,
): Promise<Answer> {
  const startedMs = now();
  const answer = await call().then(
    (res) => ({
      status: res.status,
      retryAfter: res.headers['retry-after'] as string | undefined,
      text: res.text,
    }),
    (error: unknown) => ({ status: 0, retryAfter: undefined, text: String(error) }),
  );
  return { setting, work, ...answer, startedMs, endedMs: now() };
}

function throughProxy(databaseUrl: string, proxy: TcpProxy): string {
  const url = new URL(databaseUrl);
  url.hostname = '127.0.0.1';
  url.port = String(proxy.port);
  return url.toString();
}

/** All five kinds of work for every setting, each in a loop until stopped. */
function startWork(settings: readonly Setting[]): {
  readonly answers: Answer[];
  stop(): Promise<void>;
} {
  const answers: Answer[] = [];
  let stopped = false;
  const loop = async (body: () => Promise<void>): Promise<void> => {
    while (!stopped) {
      await body();
      await sleep(PAUSE_MS);
    }
  };
  const loops = settings.flatMap((setting) => {
    const bank = setting.bank.urls[0] as string;
    const todo = setting.todo.urls[0] as string;
    const record = async (work: Work, call: () => Promise<RawResponse>): Promise<Answer> => {
      const answer = await timed(setting.name, work, call);
      answers.push(answer);
      return answer;
    };
    return [
      loop(async () => void (await record('reads', () => get(bank, '/accounts/reader')))),
      loop(
        async () =>
          void (await Promise.all(
            Array.from({ length: BATCH_READS }, (_, i) =>
              record('batched reads', () => get(bank, `/accounts/b${i}`)),
            ),
          )),
      ),
      loop(async () => {
        setting.writesSent += 1;
        const answer = await record('writes', () =>
          send(bank, { method: 'POST', path: '/withdraw/writer/1' }),
        );
        if (answer.status === 200) setting.writesOk += 1;
      }),
      // A client that retries under the same key until it is answered 200, as a careful one does.
      loop(async () => {
        const key = randomUUID();
        let finishByMs = Number.POSITIVE_INFINITY;
        for (;;) {
          const answer = await record('keyed writes', () =>
            send(bank, {
              method: 'POST',
              path: '/withdraw/keyed/1',
              headers: [['Idempotency-Key', key]],
            }),
          );
          if (answer.status === 200) break;
          if (answer.status === 0) return; // the process is gone: the test says so
          if (stopped && finishByMs === Number.POSITIVE_INFINITY)
            finishByMs = now() + KEYED_FINISH_MS;
          if (now() > finishByMs) return; // the balance then tells
          await sleep(KEYED_RETRY_MS);
        }
        setting.keyedApplied += 1;
      }),
      loop(async () => void (await record('rate-limit decisions', () => get(todo, '/todos/1')))),
    ];
  });
  return {
    answers,
    async stop() {
      stopped = true;
      await Promise.all(loops);
    },
  };
}

/** Polls every process's /readyz until stopped. */
function pollReadiness(settings: readonly Setting[]): {
  readonly answers: (Answer & { readonly service: string })[];
  stop(): Promise<void>;
} {
  const answers: (Answer & { readonly service: string })[] = [];
  let stopped = false;
  const polls = settings.flatMap((setting) =>
    (['bank', 'todo'] as const).map(async (service) => {
      while (!stopped) {
        const answer = await timed(setting.name, 'reads', () =>
          get(setting[service].urls[0] as string, '/readyz'),
        );
        answers.push({ ...answer, service });
        await sleep(100);
      }
    }),
  );
  return {
    answers,
    async stop() {
      stopped = true;
      await Promise.all(polls);
    },
  };
}

/** From `fromMs`, a read to each process every 100 ms until one succeeds: how long each took. */
async function recoveryTimes(
  settings: readonly Setting[],
  fromMs: number,
): Promise<Map<string, number>> {
  const times = new Map<string, number>();
  await Promise.all(
    settings.flatMap((setting) =>
      [
        [`${setting.name} bank`, setting.bank.urls[0] as string, '/accounts/reader'],
        [`${setting.name} to-do`, setting.todo.urls[0] as string, '/todos/1'],
      ].map(async ([name, url, path]) => {
        const tries: Promise<void>[] = [];
        while (!times.has(name as string) && now() - fromMs < RECOVERY_BOUND_MS * 3) {
          tries.push(
            get(url as string, path as string).then(
              (answer) => {
                if (success(answer.status) && !times.has(name as string))
                  times.set(name as string, now() - fromMs);
              },
              () => undefined,
            ),
          );
          await sleep(100);
        }
        await Promise.all(tries);
      }),
    ),
  );
  return times;
}

interface Fault {
  readonly name: string;
  /** Faults with a duration: /readyz must say not ready within it. Instantaneous ones have none. */
  readonly lasting: boolean;
  /** Makes the fault, and resolves when the database is back. */
  run(): Promise<void>;
}

processSuiteUnless(
  skip,
  'PostgreSQL fault matrix: faults × deadlines on and off × every kind of work',
  () => {
    let proxy: TcpProxy;
    let admin: pg.Client;
    const settings: Setting[] = [];
    /** Every database session of the services ended, as a restarted server or an operator does. */
    const terminateAll = async (): Promise<number> => {
      const { rows } = await admin.query<{ pid: number }>(
        'SELECT pg_terminate_backend(pid) AS pid FROM pg_stat_activity WHERE datname = ANY($1::text[]) AND pid <> pg_backend_pid()',
        [settings.map((setting) => databaseNameOf(setting.database))],
      );
      return rows.length;
    };

    before(async () => {
      const target = new URL(TEST_DATABASE_URL);
      proxy = await startTcpProxy(target.hostname, Number(target.port || 5432));
      admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
      admin.on('error', () => undefined);
      await admin.connect();
      await Promise.all(
        [
          ['deadlines on', DEADLINE_MS],
          ['deadlines off', 0],
        ].map(async ([name, deadlineMs]) => {
          const database = await createTestDatabase();
          const db = throughProxy(database.url, proxy);
          const common = [
            '--db',
            db,
            '--deadline-ms',
            String(deadlineMs),
            '--db-pool-wait-ms',
            '1500',
            '--access-log',
            'off',
          ];
          const [bank, todo] = await Promise.all([
            startServiceProcess(['bank', ...common, '--accounts', ACCOUNTS]),
            startServiceProcess([
              'todo',
              ...common,
              '--rate-limit',
              UNLIMITED,
              '--rate-limit-store-down',
              'closed',
            ]),
          ]);
          const created = await send(todo.urls[0] as string, {
            method: 'POST',
            path: '/todos',
            headers: [['Content-Type', 'application/json']],
            body: '{"title":"read me"}',
          });
          assert.equal(created.status, 201, created.text);
          settings.push({
            name: name as string,
            database,
            bank,
            todo,
            keyedApplied: 0,
            writesOk: 0,
            writesSent: 0,
          });
        }),
      );
    });
    after(async () => {
      await Promise.all(settings.flatMap((setting) => [setting.bank.kill(), setting.todo.kill()]));
      await proxy?.close();
      await admin?.end().catch(() => undefined);
      await Promise.all(settings.map((setting) => setting.database.drop()));
    });

    const faults: readonly Fault[] = [
      {
        name: 'refused',
        lasting: true,
        async run() {
          proxy.cut('refuse');
          await sleep(WINDOW_MS);
          await proxy.restore();
        },
      },
      {
        name: 'black hole, then back',
        lasting: true,
        async run() {
          proxy.cut('black-hole');
          await sleep(WINDOW_MS);
          await proxy.restore();
        },
      },
      {
        name: 'black hole, then every connection reset',
        lasting: true,
        async run() {
          proxy.cut('black-hole');
          await sleep(WINDOW_MS);
          assert.ok(proxy.resetEvery() > 0, 'connections were open to reset');
          await proxy.restore();
        },
      },
      {
        name: 'reset in the middle of a query',
        lasting: false,
        async run() {
          let reset = 0;
          for (let i = 0; i < 5; i++) {
            reset += proxy.resetMidQuery();
            await sleep(150);
          }
          assert.ok(reset > 0, 'some connection carried a query when it was reset');
        },
      },
      {
        name: 'pg_terminate_backend',
        lasting: false,
        async run() {
          assert.ok((await terminateAll()) > 0, 'sessions were open to terminate');
        },
      },
      {
        name: 'server restart',
        lasting: true,
        async run() {
          proxy.cut('refuse');
          await terminateAll();
          await sleep(RESTART_MS);
          await proxy.restore();
        },
      },
    ];

    for (const fault of faults) {
      test(`${fault.name}: with deadlines on and off, every kind of work is answered 2xx, 503 or 504 with Retry-After, the process lives, not ready during, served again within 2 s`, async (t) => {
        const work = startWork(settings);
        await sleep(400);
        const readiness = pollReadiness(settings);
        const faultMs = now();
        await fault.run();
        const backMs = now();
        const recovery = await recoveryTimes(settings, backMs);
        await sleep(Math.max(0, backMs + RECOVERY_BOUND_MS + SETTLE_MS - now()));
        await work.stop();
        await readiness.stop();

        for (const setting of settings) {
          for (const [service, child] of [
            ['bank', setting.bank],
            ['to-do', setting.todo],
          ] as const) {
            const state = await Promise.race([
              child.exited.then((code) => `exited with ${code}`),
              sleep(0).then(() => 'alive'),
            ]);
            assert.equal(
              state,
              'alive',
              `${fault.name}, ${setting.name}: the ${service} process ${state}:\n${child.output().slice(-3000)}`,
            );
          }
          for (const name of WORKS) {
            const cell = `${fault.name} × ${setting.name} × ${name}`;
            const answers = work.answers.filter(
              (answer) => answer.setting === setting.name && answer.work === name,
            );
            // A keyed retry may meet its own write still running after a 504: 409 with Retry-After.
            const allowed = name === 'keyed writes' ? [503, 504, 409] : [503, 504];
            for (const answer of answers) {
              if (success(answer.status)) continue;
              assert.ok(
                allowed.includes(answer.status),
                `${cell}: answered ${answer.status}: ${answer.text.slice(0, 300)}`,
              );
              assert.ok(
                answer.retryAfter !== undefined,
                `${cell}: a ${answer.status} without Retry-After`,
              );
            }
            const after = answers.filter(
              (answer) => answer.startedMs >= backMs + RECOVERY_BOUND_MS,
            );
            assert.ok(after.length > 0, `${cell}: no work done after the database came back`);
            const failed = after.filter((answer) => !success(answer.status));
            assert.deepEqual(
              failed.map((answer) => answer.status),
              [],
              `${cell}: still failing ${RECOVERY_BOUND_MS} ms after the database came back`,
            );
          }
          for (const [service, name] of [
            ['bank', 'bank'],
            ['todo', 'to-do'],
          ] as const) {
            const took = recovery.get(`${setting.name} ${name}`);
            assert.ok(
              took !== undefined && took <= RECOVERY_BOUND_MS,
              `${fault.name}, ${setting.name}: the ${name} answered again after ${took ?? 'more than 6000'} ms`,
            );
            const polls = readiness.answers.filter(
              (poll) => poll.setting === setting.name && poll.service === service,
            );
            if (fault.lasting) {
              const during = polls.filter(
                (poll) => poll.startedMs >= faultMs + 100 && poll.endedMs <= backMs,
              );
              assert.ok(
                during.length > 0,
                `${fault.name}, ${setting.name}: /readyz was asked during the fault`,
              );
              assert.deepEqual(
                during.filter((poll) => poll.status !== 503).map((poll) => poll.status),
                [],
                `${fault.name}, ${setting.name}: the ${name}'s /readyz during the fault`,
              );
            }
            const later = polls.filter((poll) => poll.startedMs >= backMs + RECOVERY_BOUND_MS);
            assert.deepEqual(
              later.filter((poll) => poll.status !== 200).map((poll) => poll.status),
              [],
              `${fault.name}, ${setting.name}: the ${name}'s /readyz after`,
            );
          }
          // Each key answered 200 was applied once, however many times it was sent; no acknowledged
          // unkeyed write is lost, and none is applied that was not sent.
          const bank = setting.bank.urls[0] as string;
          const balance = async (account: string): Promise<number> =>
            (JSON.parse((await get(bank, `/accounts/${account}`)).text) as { balance: number })
              .balance;
          assert.equal(
            await balance('keyed'),
            START - setting.keyedApplied,
            `${fault.name}, ${setting.name}: keyed writes applied once each`,
          );
          const writer = await balance('writer');
          assert.ok(
            writer <= START - setting.writesOk && writer >= START - setting.writesSent,
            `${fault.name}, ${setting.name}: writer at ${writer}, ${setting.writesOk} acknowledged of ${setting.writesSent} sent`,
          );
        }
        const counts = settings.map((setting) => {
          const mine = work.answers.filter((answer) => answer.setting === setting.name);
          const by = (status: number): number =>
            mine.filter((answer) => answer.status === status).length;
          const slowest = Math.max(
            ...mine
              .filter((answer) => answer.startedMs < backMs)
              .map((answer) => answer.endedMs - answer.startedMs),
          );
          return `${setting.name}: ${mine.length} answers (${by(503)}×503, ${by(504)}×504, ${by(409)}×409), slowest during the fault ${Math.round(slowest)} ms`;
        });
        t.diagnostic(
          `${fault.name}: ${counts.join('; ')}; answering again after ${[...recovery].map(([name, ms]) => `${name} ${Math.round(ms)} ms`).join(', ')}`,
        );
      });
    }
  },
);
