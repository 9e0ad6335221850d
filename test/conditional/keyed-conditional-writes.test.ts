// Conditional writes under an Idempotency-Key (RFC 9110 §13 with the httpapi draft): PUT, DELETE
// and POST /todos/{id}/done take a key as POST /todos does. A retry whose first attempt went
// through replays that attempt's 2xx, with its ETag where it had one (a PUT's has none, RFC 9110
// §9.3.4), instead of a 412 for the version it made itself; a refused attempt is recorded and
// replayed as the bank's refusals are; a key used for another request is refused, and nothing
// changes twice. Real servers on a SQLite file and on PostgreSQL.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { get, send, type RawResponse } from '../support/http.js';
import { withServer } from '../support/server.js';
import { storeBackends, type FreshDatabase } from '../support/store-backends.js';
import { suiteUnless } from '../support/suite.js';

type Headers = readonly (readonly [string, string])[];
const JSON_BODY: Headers = [['Content-Type', 'application/json']];

const put = (url: string, path: string, title: string, headers: Headers): Promise<RawResponse> =>
  send(url, {
    method: 'PUT',
    path,
    headers: [...JSON_BODY, ...headers],
    body: JSON.stringify({ title }),
  });
const del = (url: string, path: string, headers: Headers): Promise<RawResponse> =>
  send(url, { method: 'DELETE', path, headers });
const finish = (url: string, path: string, headers: Headers): Promise<RawResponse> =>
  send(url, { method: 'POST', path: `${path}/done`, headers });
const codeOf = (res: RawResponse): string =>
  (JSON.parse(res.text) as { error: { code: string } }).error.code;
const titleAt = (text: string): string => (JSON.parse(text) as { title: string }).title;
/** The item's current tag, as a client learns it after a PUT: a HEAD, which costs no body. */
const headTag = async (url: string, path: string): Promise<string> => {
  const tag = (await send(url, { method: 'HEAD', path })).headers.etag;
  assert.ok(typeof tag === 'string', `a HEAD of ${path} carries its ETag`);
  return tag;
};

/** The same answer again, marked as a replay: status, body and ETag (or none) of the first. */
function assertReplayOf(replay: RawResponse, first: RawResponse): void {
  assert.equal(replay.headers['idempotent-replayed'], 'true', 'marked as a replay');
  assert.equal(replay.status, first.status);
  assert.equal(replay.text, first.text);
  assert.equal(replay.headers.etag, first.headers.etag);
}

async function withTodoServer(
  backend: () => Promise<FreshDatabase>,
  body: (url: string) => Promise<void>,
): Promise<void> {
  const database = await backend();
  try {
    await withServer({ service: 'todo', errors: 'unified', db: database.db }, body);
  } finally {
    await database.drop();
  }
}

for (const backend of await storeBackends()) {
  suiteUnless(backend.skip, `keyed conditional writes on ${backend.name}`, () => {
    const withTodos = (body: (url: string) => Promise<void>): Promise<void> =>
      withTodoServer(() => backend.fresh(), body);

    test('a retried conditional PUT whose first attempt succeeded replays its 200, not 412, and writes nothing again', () =>
      withTodos(async (url) => {
        const tag = (await get(url, '/todos/1')).headers.etag as string;
        const attempt = (): Promise<RawResponse> =>
          put(url, '/todos/1', 'Buy oat milk', [
            ['If-Match', tag],
            ['Idempotency-Key', 'put-1'],
          ]);
        const first = await attempt();
        assert.equal(first.status, 200);
        const made = await headTag(url, '/todos/1');
        assert.notEqual(made, tag);
        const retry = await attempt();
        assertReplayOf(retry, first);
        const now = await get(url, '/todos/1');
        assert.equal(now.headers.etag, made, 'the retry took no new version');
        assert.equal(now.text, first.text);
      }));

    test('a retried conditional DELETE whose first attempt succeeded replays its 204, not 412 or 404', () =>
      withTodos(async (url) => {
        const tag = (await get(url, '/todos/1')).headers.etag as string;
        const attempt = (): Promise<RawResponse> =>
          del(url, '/todos/1', [
            ['If-Match', tag],
            ['Idempotency-Key', 'delete-1'],
          ]);
        const first = await attempt();
        assert.equal(first.status, 204);
        const retry = await attempt();
        assertReplayOf(retry, first);
        assert.equal(retry.body.length, 0);
        assert.equal((await get(url, '/todos/1')).status, 404);
      }));

    test('a retried conditional finish whose first attempt succeeded replays its 200 and ETag, not 409 or 412', () =>
      withTodos(async (url) => {
        const tag = (await get(url, '/todos/1')).headers.etag as string;
        const attempt = (): Promise<RawResponse> =>
          finish(url, '/todos/1', [
            ['If-Match', tag],
            ['Idempotency-Key', 'done-1'],
          ]);
        const first = await attempt();
        assert.equal(first.status, 200);
        assert.deepEqual(JSON.parse(first.text), { id: 1, title: 'Buy milk', done: true });
        const retry = await attempt();
        assertReplayOf(retry, first);
        assert.equal(
          (await get(url, '/todos/1')).headers.etag,
          first.headers.etag,
          'the retry took no new version',
        );
      }));

    test('a replay carries the ETag of its first answer even after the item changed since', () =>
      withTodos(async (url) => {
        const attempt = (): Promise<RawResponse> =>
          finish(url, '/todos/1', [
            ['If-Match', '*'],
            ['Idempotency-Key', 'done-then-changed'],
          ]);
        const first = await attempt();
        assert.equal(first.status, 200);
        assert.ok(first.headers.etag !== undefined, "done's answer carries its ETag");
        assert.equal((await put(url, '/todos/1', 'someone else', [])).status, 200);
        assert.notEqual(await headTag(url, '/todos/1'), first.headers.etag);
        assertReplayOf(await attempt(), first);
        assert.deepEqual(
          JSON.parse((await get(url, '/todos/1')).text),
          { id: 1, title: 'someone else', done: false },
          'the replay overwrote nothing',
        );
      }));

    test('a replayed PUT carries no ETag either (RFC 9110 §9.3.4), while a replayed done or DELETE keeps what its first answer had', () =>
      withTodos(async (url) => {
        const replace = (): Promise<RawResponse> =>
          put(url, '/todos/1', 'replaced', [['Idempotency-Key', 'put-replace']]);
        const create = (): Promise<RawResponse> =>
          put(url, '/todos/5', 'created', [['Idempotency-Key', 'put-create']]);
        const done = (): Promise<RawResponse> =>
          finish(url, '/todos/2', [['Idempotency-Key', 'done-2']]);
        const remove = (): Promise<RawResponse> =>
          del(url, '/todos/3', [['Idempotency-Key', 'delete-3']]);
        for (const item of [2, 3])
          assert.equal((await put(url, `/todos/${item}`, `item ${item}`, [])).status, 201);
        const firsts = [await replace(), await create(), await done(), await remove()];
        assert.deepEqual(
          firsts.map((res) => res.status),
          [200, 201, 200, 204],
        );
        const tags = firsts.map((res) => res.headers.etag);
        assert.deepEqual(
          [tags[0], tags[1], typeof tags[2], tags[3]],
          [undefined, undefined, 'string', undefined],
          "only done's first answer carries an ETag",
        );
        const replays = [await replace(), await create(), await done(), await remove()];
        replays.forEach((replay, i) => assertReplayOf(replay, firsts[i] as RawResponse));
        assert.equal(replays[0]?.headers.etag, undefined, "a replayed PUT's 200 has no ETag");
        assert.equal(replays[1]?.headers.etag, undefined, "a replayed PUT's 201 has no ETag");
        assert.equal(replays[2]?.headers.etag, tags[2], "a replayed done keeps its first's ETag");
        assert.equal(await headTag(url, '/todos/2'), tags[2], 'the replay took no new version');
      }));

    test('a key used again for another request (another body, path or method) is 422 IDEMPOTENCY_KEY_REUSED and changes nothing', () =>
      withTodos(async (url) => {
        const first = await put(url, '/todos/1', 'Buy oat milk', [
          ['Idempotency-Key', 'one-request'],
        ]);
        assert.equal(first.status, 200);
        const made = await headTag(url, '/todos/1');
        const others = [
          await put(url, '/todos/1', 'Buy rice milk', [['Idempotency-Key', 'one-request']]),
          await put(url, '/todos/2', 'Buy oat milk', [['Idempotency-Key', 'one-request']]),
          await del(url, '/todos/1', [['Idempotency-Key', 'one-request']]),
          await finish(url, '/todos/1', [['Idempotency-Key', 'one-request']]),
        ];
        assert.deepEqual(
          others.map((res) => [res.status, codeOf(res)]),
          others.map(() => [422, 'IDEMPOTENCY_KEY_REUSED']),
        );
        const now = await get(url, '/todos/1');
        assert.equal(now.text, first.text);
        assert.equal(now.headers.etag, made);
        assert.equal((await get(url, '/todos/2')).status, 404);
      }));

    test('a refused keyed write is recorded as the bank records its refusals: its retry replays the 412, and still writes nothing', () =>
      withTodos(async (url) => {
        const attempt = (): Promise<RawResponse> =>
          put(url, '/todos/1', 'stale', [
            ['If-Match', '"999"'],
            ['Idempotency-Key', 'stale-put'],
          ]);
        const first = await attempt();
        assert.deepEqual([first.status, codeOf(first)], [412, 'PRECONDITION_FAILED']);
        assertReplayOf(await attempt(), first);
        assert.equal(titleAt((await get(url, '/todos/1')).text), 'Buy milk');
      }));

    test('a keyed DELETE of a missing item replays its 404 even once the id holds an item again, which it leaves alone', () =>
      withTodos(async (url) => {
        const attempt = (): Promise<RawResponse> =>
          del(url, '/todos/5', [['Idempotency-Key', 'delete-5']]);
        const first = await attempt();
        assert.equal(first.status, 404);
        assert.equal((await put(url, '/todos/5', 'now there', [])).status, 201);
        assertReplayOf(await attempt(), first);
        assert.equal((await get(url, '/todos/5')).status, 200);
      }));
  });
}

suiteUnless(false, 'keys on conditional writes: the option and the documents', () => {
  test('--require-idempotency-key leaves the key of PUT, DELETE and done optional; POST /todos still needs one', () =>
    withServer(
      { service: 'todo', errors: 'unified', idempotency: { required: true, ttlMs: 60_000 } },
      async (url) => {
        assert.equal((await put(url, '/todos/1', 'no key', [])).status, 200);
        assert.equal((await finish(url, '/todos/1', [])).status, 200);
        assert.equal((await del(url, '/todos/1', [])).status, 204);
        const create = await send(url, {
          method: 'POST',
          path: '/todos',
          headers: JSON_BODY,
          body: '{"title":"no key"}',
        });
        assert.deepEqual([create.status, codeOf(create)], [400, 'IDEMPOTENCY_KEY_REQUIRED']);
      },
    ));

  test('the documents list the Idempotency-Key header and the replay header on PUT, DELETE and done', () =>
    withServer({ service: 'todo' }, async (url) => {
      type Operation = {
        parameters?: { name: string; in: string; required: boolean }[];
        responses: Record<string, { headers?: Record<string, unknown> }>;
      };
      const paths = (
        JSON.parse((await get(url, '/openapi.json')).text) as {
          paths: Record<string, Record<string, Operation>>;
        }
      ).paths;
      for (const [path, method, status] of [
        ['/todos/{todo_id}', 'put', '200'],
        ['/todos/{todo_id}', 'delete', '204'],
        ['/todos/{todo_id}/done', 'post', '200'],
      ] as const) {
        const op = paths[path]?.[method];
        assert.ok(op !== undefined, `${method} ${path}`);
        const key = op.parameters?.find((parameter) => parameter.name === 'Idempotency-Key');
        assert.deepEqual(
          [key?.in, key?.required],
          ['header', false],
          `${method} ${path} takes an optional key`,
        );
        assert.ok(
          op.responses[status]?.headers?.['Idempotent-Replayed'] !== undefined,
          `${method} ${path}'s ${status} may be a replay`,
        );
      }
    }));
});
