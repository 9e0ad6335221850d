// Every header an answer carries is declared on the row of the document it is read under, and
// every header a row says is required is there (issue 42: headers the services sent were missing
// from their documents). Each service in every error format, with each edge option alone and all
// of them together, provokes every status its operations answer (a 304, 4xx, the 429 of a rate
// limit, the 503 of shedding and the 504 of a deadline behind a locked SQLite file, the bank's
// 500), each from a page on a listed origin, and checks each answer against its row.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import Database from 'better-sqlite3';
import { parseCorsOrigins, type CorsPolicy } from '../../src/features/cors/cors.js';
import { DEFAULT_IDEMPOTENCY_TTL_MS } from '../../src/features/idempotency/gate.js';
import type { ErrorFormat } from '../../src/http/render.js';
import { send, type RawRequest, type RawResponse } from '../support/http.js';
import { startTestServer, type TestServerOptions } from '../support/server.js';
import { SUITE_TIMEOUT_MS } from '../support/time-limits.js';

const LISTED = 'http://127.0.0.1:5173';
const UNLISTED = 'http://127.0.0.1:9999';

/** Headers every HTTP/1.1 answer may carry, which OpenAPI does not describe (framing, the connection, the date, the body's type). */
const FRAMING = new Set([
  'content-type',
  'content-length',
  'connection',
  'keep-alive',
  'date',
  'transfer-encoding',
]);

type Service = 'todo' | 'bank';
interface Mode {
  readonly service: Service;
  readonly errors: ErrorFormat['name'];
  readonly catchAll: boolean;
}
const MODES: readonly Mode[] = (['todo', 'bank'] as const).flatMap((service) => [
  { service, errors: 'default' as const, catchAll: false },
  { service, errors: 'unified' as const, catchAll: false },
  { service, errors: 'unified' as const, catchAll: true },
  { service, errors: 'problem' as const, catchAll: false },
]);

type Options = Omit<TestServerOptions, 'service' | 'errors' | 'catchAll'>;
const LIMITS = {
  limits: { writes: { perSecond: 0.001, burst: 80 }, reads: { perSecond: 0.001, burst: 120 } },
};
const EACH: Readonly<Record<string, Options>> = {
  none: {},
  cors: { cors: parseCorsOrigins(LISTED) as CorsPolicy },
  'cross-origin protection': { crossOriginProtection: true },
  'rate limits': { rateLimiting: LIMITS },
  'deadline and shedding': { deadlineMs: 1_000, shedding: { waitingMax: 1 } },
  'keys required': { idempotency: { required: true, ttlMs: DEFAULT_IDEMPOTENCY_TTL_MS } },
  'If-Match required': { requireIfMatch: true },
  // Both services' reads of one item, deprecated until a sunset far ahead: every answer of theirs
  // carries the lifecycle's headers.
  lifecycle: {
    deprecations: [
      { method: 'GET', path: '/v2/todos/{todo_id}', deprecatedAtMs: 0, sunsetAtMs: 4e12 },
      { method: 'GET', path: '/accounts/{account}', deprecatedAtMs: 0, sunsetAtMs: 4e12 },
    ],
  },
};
const ALL: Options = Object.assign({}, ...Object.values(EACH)) as Options;

interface Row {
  readonly headers?: Readonly<
    Record<string, { readonly required?: boolean; readonly $ref?: string }>
  >;
}
interface Document {
  readonly paths: Readonly<
    Record<string, Readonly<Record<string, { readonly responses: Readonly<Record<string, Row>> }>>>
  >;
  readonly components: {
    readonly headers?: Readonly<Record<string, { readonly required?: boolean }>>;
  };
}

/** The operation a request is answered by, and the row its status is read under. */
function rowOf(
  document: Document,
  method: string,
  path: string,
  status: number,
): { readonly key: string; readonly row: Row } | undefined {
  const bare = path.split('?')[0] as string;
  for (const [template, operations] of Object.entries(document.paths)) {
    const pattern = new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`);
    if (!pattern.test(bare)) continue;
    const operation = operations[method.toLowerCase()];
    if (operation === undefined) return undefined;
    const key = [String(status), `${String(status).charAt(0)}XX`, 'default'].find(
      (candidate) => operation.responses[candidate] !== undefined,
    );
    return key === undefined ? undefined : { key, row: operation.responses[key] as Row };
  }
  return undefined;
}

/** The headers a row declares, by lower-case name, with whether each is required. */
function declared(document: Document, row: Row): Map<string, boolean> {
  const names = new Map<string, boolean>();
  for (const [name, header] of Object.entries(row.headers ?? {})) {
    const resolved =
      header.$ref === undefined
        ? header
        : document.components.headers?.[header.$ref.split('/').pop() as string];
    names.set(name.toLowerCase(), resolved?.required === true);
  }
  return names;
}

const json: [string, string] = ['Content-Type', 'application/json'];

/** Requests that provoke every status of a service's operations; each sent from a page on the listed origin unless it says otherwise. */
function provocations(service: Service, options: Options): RawRequest[] {
  if (service === 'bank') {
    const keyed = (key: string, path = '/withdraw/alice/1'): RawRequest => ({
      method: 'POST',
      path,
      headers: [['Idempotency-Key', key]],
    });
    return [
      { method: 'GET', path: '/accounts/alice' },
      { method: 'GET', path: '/accounts/alice', headers: [['If-None-Match', '*']] },
      { method: 'GET', path: '/accounts/alice', headers: [['If-Match', '"0"']] },
      { method: 'GET', path: '/accounts/nobody' },
      { method: 'GET', path: '/secret' },
      { method: 'GET', path: '/accounts/alice/limits' },
      { method: 'GET', path: '/crash' },
      keyed('w-1'),
      keyed('w-1'),
      keyed('w-1', '/withdraw/alice/2'),
      keyed('"bad key'),
      { method: 'POST', path: '/withdraw/alice/x', headers: [['Idempotency-Key', 'w-2']] },
      keyed('w-3', '/withdraw/bob/6'),
      keyed('w-3', '/withdraw/bob/6'),
      keyed('w-4', '/withdraw/nobody/1'),
      { method: 'POST', path: '/withdraw/alice/1' },
      {
        method: 'POST',
        path: '/withdraw/alice/1',
        headers: [
          ['Sec-Fetch-Site', 'cross-site'],
          ['Origin', UNLISTED],
        ],
      },
      ...(options.cors === undefined
        ? []
        : [
            {
              method: 'OPTIONS',
              path: '/withdraw/alice/1',
              headers: [['Access-Control-Request-Method', 'POST']],
            } satisfies RawRequest,
          ]),
    ];
  }
  const body = (title: string): string => JSON.stringify({ title });
  return [
    { method: 'GET', path: '/todos/1' },
    { method: 'GET', path: '/todos/1', headers: [['If-None-Match', '*']] },
    { method: 'GET', path: '/todos/1', headers: [['If-Match', '"999"']] },
    { method: 'GET', path: '/v2/todos/999' },
    { method: 'GET', path: '/todos/abc' },
    { method: 'PUT', path: '/todos/1', headers: [json, ['If-Match', '*']], body: body('a') },
    { method: 'PUT', path: '/todos/1', headers: [json], body: body('blind') },
    {
      method: 'PUT',
      path: '/todos/1',
      headers: [json, ['If-Match', '"999"']],
      body: body('stale'),
    },
    { method: 'PUT', path: '/todos/50', headers: [json], body: body('new') },
    { method: 'PUT', path: '/todos/1', headers: [json, ['If-Match', '*']], body: '{"title":' },
    {
      method: 'POST',
      path: '/todos',
      headers: [json, ['Idempotency-Key', 'k-1']],
      body: body('k'),
    },
    {
      method: 'POST',
      path: '/todos',
      headers: [json, ['Idempotency-Key', 'k-1']],
      body: body('k'),
    },
    {
      method: 'POST',
      path: '/todos',
      headers: [json, ['Idempotency-Key', 'k-1']],
      body: body('other'),
    },
    {
      method: 'POST',
      path: '/todos',
      headers: [json, ['Idempotency-Key', '"bad']],
      body: body('k'),
    },
    { method: 'POST', path: '/todos', headers: [json], body: body('no key') },
    {
      method: 'POST',
      path: '/todos',
      headers: [json, ['Idempotency-Key', 'k-2']],
      body: Buffer.from([0x7b, 0xff, 0x7d]),
    },
    {
      method: 'POST',
      path: '/todos',
      headers: [json, ['Idempotency-Key', 'k-3']],
      body: 'x'.repeat(1024 * 1024 + 1),
    },
    { method: 'POST', path: '/todos/1/done', headers: [['Idempotency-Key', 'd-1']] },
    { method: 'POST', path: '/todos/1/done', headers: [['Idempotency-Key', 'd-2']] },
    { method: 'POST', path: '/todos/999/done' },
    { method: 'DELETE', path: '/todos/2', headers: [['If-Match', '*']] },
    { method: 'DELETE', path: '/todos/3' },
    { method: 'DELETE', path: '/todos/999', headers: [['If-Match', '*']] },
    { method: 'DELETE', path: '/oops/3' },
    {
      method: 'POST',
      path: '/todos',
      headers: [
        json,
        ['Idempotency-Key', 'k-4'],
        ['Sec-Fetch-Site', 'cross-site'],
        ['Origin', UNLISTED],
      ],
      body: body('forged'),
    },
    ...(options.cors === undefined
      ? []
      : [
          {
            method: 'OPTIONS',
            path: '/todos',
            headers: [['Access-Control-Request-Method', 'POST']],
          } satisfies RawRequest,
        ]),
  ];
}

/** The request as a page sends it: from the listed origin under CORS, else from the service's own. */
const fromPage = (req: RawRequest, origin: string): RawRequest =>
  req.headers?.some(([name]) => name === 'Origin') === true
    ? req
    : { ...req, headers: [...(req.headers ?? []), ['Origin', origin]] };

/** What is wrong with an answer's headers beside its row, or nothing. */
function misfits(document: Document, req: RawRequest, res: RawResponse): string[] {
  const found = rowOf(document, req.method, req.path, res.status);
  if (found === undefined) return [`${req.method} ${req.path} ${res.status}: no row documents it`];
  const names = declared(document, found.row);
  const wrong: string[] = [];
  for (const name of Object.keys(res.headers)) {
    if (!FRAMING.has(name) && !names.has(name))
      wrong.push(
        `${req.method} ${req.path} ${res.status}: ${name} is not declared on row ${found.key}`,
      );
  }
  for (const [name, required] of names) {
    if (required && res.headers[name] === undefined)
      wrong.push(
        `${req.method} ${req.path} ${res.status}: required ${name} is missing (row ${found.key})`,
      );
  }
  return wrong;
}

/** With a deadline and shedding: a write behind a locked SQLite file waits into its 504, and a read meanwhile is shed (503). */
async function stuckAnswers(
  url: string,
  file: string,
  origin: string,
): Promise<[RawRequest, RawResponse][]> {
  const holder = new Database(file);
  holder.pragma('busy_timeout = 0');
  holder.exec('BEGIN IMMEDIATE');
  try {
    const write = fromPage(
      {
        method: 'POST',
        path: '/todos',
        headers: [json, ['Idempotency-Key', 's-1']],
        body: '{"title":"late"}',
      },
      origin,
    );
    const waiting = send(url, write);
    await new Promise((resolve) => setTimeout(resolve, 100));
    const read = fromPage({ method: 'GET', path: '/todos/1' }, origin);
    const shed = await send(url, read);
    return [
      [read, shed],
      [write, await waiting],
    ];
  } finally {
    holder.exec('ROLLBACK');
    holder.close();
  }
}

async function checkMode(
  mode: Mode,
  options: Options,
): Promise<{ readonly statuses: Set<number>; readonly wrong: string[] }> {
  const dir = mkdtempSync(join(tmpdir(), 'response-headers-'));
  const file = join(dir, 'todo.sqlite');
  const stuck = mode.service === 'todo' && options.deadlineMs !== undefined;
  const server = await startTestServer({
    ...options,
    ...mode,
    db: stuck ? { kind: 'sqlite', path: file } : undefined,
    requireIfMatch: mode.service === 'todo' ? options.requireIfMatch : undefined,
  });
  try {
    const document = JSON.parse(
      (await send(server.url, { method: 'GET', path: '/openapi.json' })).text,
    ) as Document;
    const answers: [RawRequest, RawResponse][] = [];
    const origin = options.cors === undefined ? new URL(server.url).origin : LISTED;
    for (const raw of provocations(mode.service, options)) {
      const req = fromPage(raw, origin);
      answers.push([req, await send(server.url, req)]);
    }
    if (stuck) answers.push(...(await stuckAnswers(server.url, file, origin)));
    if (options.rateLimiting !== undefined) {
      const read = fromPage(
        { method: 'GET', path: mode.service === 'todo' ? '/todos/1' : '/accounts/alice' },
        origin,
      );
      // Until the reads' burst is spent; a read shed while the stuck write still settles is tried
      // again.
      for (let i = 0; i < 200; i++) {
        const res = await send(server.url, read);
        if (res.status === 503) await new Promise((resolve) => setTimeout(resolve, 50));
        if (res.status !== 429) continue;
        answers.push([read, res]);
        break;
      }
    }
    return {
      statuses: new Set(answers.map(([, res]) => res.status)),
      wrong: answers.flatMap(([req, res]) => misfits(document, req, res)),
    };
  } finally {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

describe(
  'every header an answer carries is declared on its row, every required one is sent',
  { timeout: SUITE_TIMEOUT_MS },
  () => {
    const sets: [string, Options][] = [...Object.entries(EACH), ['all together', ALL]];
    for (const [name, options] of sets) {
      test(`${name}: in all 8 modes`, async () => {
        for (const mode of MODES) {
          const { statuses, wrong } = await checkMode(mode, options);
          const what = `${mode.service} ${mode.errors}${mode.catchAll ? ' catch-all' : ''}, ${name}`;
          assert.deepEqual(wrong, [], what);
          // The provocations reach what they are meant to: the option's own statuses among them.
          if (options.rateLimiting !== undefined)
            assert.ok(statuses.has(429), `${what}: a 429 among ${[...statuses].join(', ')}`);
          if (options.crossOriginProtection === true || options.cors !== undefined)
            assert.ok(statuses.has(403), `${what}: a 403`);
          if (mode.service === 'todo' && options.deadlineMs !== undefined)
            assert.ok(statuses.has(504) && statuses.has(503), `${what}: a 504 and a 503`);
          if (mode.service === 'todo' && options.requireIfMatch === true)
            assert.ok(statuses.has(428), `${what}: a 428 among ${[...statuses].join(', ')}`);
          assert.ok(
            statuses.has(304) && statuses.has(412) && statuses.has(422),
            `${what}: 304, 412, 422`,
          );
        }
      });
    }
  },
);
