// The to-do service, one test per promise of the contract (docs/contract.md), each on a
// real server with a fresh store.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { RunningServer } from '../../src/server.js';
import { get, json, postJson, send, type RawResponse } from '../support/http.js';
import { startTestServer, withServer } from '../support/server.js';
import { SUITE_TIMEOUT_MS } from '../support/time-limits.js';

/** A test on a fresh to-do server. */
const onTodo = (name: string, body: (url: string) => Promise<void>): void => {
  test(name, () => withServer({ service: 'todo' }, body));
};

describe('to-do resource', { timeout: SUITE_TIMEOUT_MS }, () => {
  onTodo('at start the store holds item 1, not done', async (url) => {
    const res = await get(url, '/todos/1');
    assert.equal(res.status, 200);
    assert.deepEqual(json(res), { id: 1, title: 'Buy milk', done: false });
  });

  onTodo('GET of a missing id is 404 "Todo not found"', async (url) => {
    const res = await get(url, '/todos/2');
    assert.equal(res.status, 404);
    assert.deepEqual(json(res), { detail: 'Todo not found' });
  });

  onTodo(
    'a todo_id that is not an integer is 422 int_parsing at ["path","todo_id"]',
    async (url) => {
      const res = await get(url, '/todos/abc');
      assert.equal(res.status, 422);
      assert.deepEqual(json(res), {
        detail: [
          {
            type: 'int_parsing',
            loc: ['path', 'todo_id'],
            msg: 'Input should be a valid integer, unable to parse string as an integer',
            input: 'abc',
          },
        ],
      });
    },
  );

  onTodo('POST /todos is 201 with the new item, id one more than the largest', async (url) => {
    await postJson(url, '/todos/7', '{"title":"seven"}', 'PUT');
    const res = await postJson(url, '/todos', '{"title":"Walk dog"}');
    assert.equal(res.status, 201);
    assert.deepEqual(json(res), { id: 8, title: 'Walk dog', done: false });
  });

  onTodo('done is optional on input and defaults to false; a given done is kept', async (url) => {
    assert.equal(
      (json(await postJson(url, '/todos', '{"title":"a"}')) as { done: boolean }).done,
      false,
    );
    assert.equal(
      (json(await postJson(url, '/todos', '{"title":"b","done":true}')) as { done: boolean }).done,
      true,
    );
  });

  onTodo(
    'a body without title is 422 missing at ["body","title"] and creates nothing',
    async (url) => {
      const res = await postJson(url, '/todos', '{"done":false}');
      assert.equal(res.status, 422);
      assert.deepEqual(json(res), {
        detail: [
          {
            type: 'missing',
            loc: ['body', 'title'],
            msg: 'Field required',
            input: { done: false },
          },
        ],
      });
      assert.equal(
        (json(await postJson(url, '/todos', '{"title":"next"}')) as { id: number }).id,
        2,
      );
    },
  );

  onTodo('PUT on an existing id replaces it and answers 200', async (url) => {
    const res = await postJson(url, '/todos/1', '{"title":"replaced"}', 'PUT');
    assert.equal(res.status, 200);
    assert.deepEqual(json(res), { id: 1, title: 'replaced', done: false });
    assert.deepEqual(json(await get(url, '/todos/1')), { id: 1, title: 'replaced', done: false });
  });

  onTodo('PUT on a new id creates it under that id and answers 201', async (url) => {
    const res = await postJson(url, '/todos/5', '{"title":"five","done":true}', 'PUT');
    assert.equal(res.status, 201);
    assert.deepEqual(json(res), { id: 5, title: 'five', done: true });
    assert.equal((await get(url, '/todos/5')).status, 200);
  });

  onTodo('PUT with an invalid body is 422 and changes nothing', async (url) => {
    const res = await postJson(url, '/todos/1', '{"done":true}', 'PUT');
    assert.equal(res.status, 422);
    assert.deepEqual(json(await get(url, '/todos/1')), { id: 1, title: 'Buy milk', done: false });
  });

  onTodo(
    'DELETE of an existing item is 204 with an empty body, and the item is gone',
    async (url) => {
      const res = await send(url, { method: 'DELETE', path: '/todos/1' });
      assert.equal(res.status, 204);
      assert.equal(res.body.length, 0);
      assert.equal(res.headers['content-type'], undefined);
      assert.equal((await get(url, '/todos/1')).status, 404);
    },
  );

  onTodo('DELETE of a missing item is 404 "Todo not found"', async (url) => {
    const res = await send(url, { method: 'DELETE', path: '/todos/9' });
    assert.equal(res.status, 404);
    assert.deepEqual(json(res), { detail: 'Todo not found' });
  });

  onTodo(
    'DELETE /oops/{id} is 204 with an empty body though the handler produced a value, with no existence check',
    async (url) => {
      for (const id of ['1', '999']) {
        const res = await send(url, { method: 'DELETE', path: `/oops/${id}` });
        assert.equal(res.status, 204);
        assert.equal(res.body.length, 0);
        assert.equal(res.headers['content-type'], undefined);
      }
      assert.equal((await send(url, { method: 'DELETE', path: '/oops/abc' })).status, 422);
    },
  );
});

describe('to-do states', { timeout: SUITE_TIMEOUT_MS }, () => {
  onTodo('finishing an open item is 200 with done true', async (url) => {
    const res = await send(url, { method: 'POST', path: '/todos/1/done' });
    assert.equal(res.status, 200);
    assert.deepEqual(json(res), { id: 1, title: 'Buy milk', done: true });
  });

  onTodo(
    'finishing a finished item is 409 "Todo is already done" and it stays done',
    async (url) => {
      await send(url, { method: 'POST', path: '/todos/1/done' });
      const res = await send(url, { method: 'POST', path: '/todos/1/done' });
      assert.equal(res.status, 409);
      assert.deepEqual(json(res), { detail: 'Todo is already done' });
      assert.equal((json(await get(url, '/todos/1')) as { done: boolean }).done, true);
    },
  );

  onTodo('finishing a missing item is 404', async (url) => {
    const res = await send(url, { method: 'POST', path: '/todos/42/done' });
    assert.equal(res.status, 404);
    assert.deepEqual(json(res), { detail: 'Todo not found' });
  });

  onTodo('no operation moves an item back from done: PATCH is 405', async (url) => {
    const res = await send(url, {
      method: 'PATCH',
      path: '/todos/1',
      headers: [['Content-Type', 'application/json']],
      body: '{"done":false}',
    });
    assert.equal(res.status, 405);
    assert.deepEqual(json(res), { detail: 'Method Not Allowed' });
  });
});

describe('ids a path can name (D11)', { timeout: SUITE_TIMEOUT_MS }, () => {
  const LAST_ID = Number.MAX_SAFE_INTEGER;
  const expected = {
    default: { detail: 'No id is left for a new todo' },
    unified: { error: { code: 'HTTP_409', message: 'No id is left for a new todo' } },
    problem: {
      type: 'about:blank',
      title: 'Conflict',
      status: 409,
      detail: 'No id is left for a new todo',
      code: 'HTTP_409',
    },
  } as const;
  for (const errors of ['default', 'unified', 'problem'] as const) {
    test(`in the ${errors} format, a POST that would pass 2^53-1 is 409 "No id is left for a new todo" and stores nothing`, () =>
      withServer({ service: 'todo', errors }, async (url) => {
        await postJson(url, `/todos/${LAST_ID}`, '{"title":"last"}', 'PUT');
        const res = await postJson(url, '/todos', '{"title":"past"}');
        assert.equal(res.status, 409);
        assert.deepEqual(json(res), expected[errors]);
        assert.deepEqual(json(await get(url, `/todos/${LAST_ID}`)), {
          id: LAST_ID,
          title: 'last',
          done: false,
        });
      }));
  }

  onTodo(
    'a keyed POST with no id left is 409, and its key replays that 409 even once an id is free',
    async (url) => {
      const create = (): Promise<RawResponse> =>
        send(url, {
          method: 'POST',
          path: '/todos',
          headers: [
            ['Content-Type', 'application/json'],
            ['Idempotency-Key', 'd11'],
          ],
          body: '{"title":"later"}',
        });
      await postJson(url, `/todos/${LAST_ID}`, '{"title":"last"}', 'PUT');
      const refused = await create();
      assert.equal(refused.status, 409);
      assert.equal(refused.headers['idempotent-replayed'], undefined);
      assert.equal((await send(url, { method: 'DELETE', path: `/todos/${LAST_ID}` })).status, 204);
      const replayed = await create();
      assert.equal(replayed.status, 409);
      assert.equal(replayed.headers['idempotent-replayed'], 'true');
      assert.equal(replayed.text, refused.text);
      assert.equal((await get(url, '/todos/2')).status, 404, 'the replay created nothing');
    },
  );
});

describe('versioned read', { timeout: SUITE_TIMEOUT_MS }, () => {
  onTodo(
    'GET /v2/todos/{id} is 200 with the item, 404 when missing, 422 for a non-integer',
    async (url) => {
      assert.equal((await get(url, '/v2/todos/1')).status, 200);
      assert.deepEqual(json(await get(url, '/v2/todos/2')), { detail: 'Todo not found' });
      assert.equal((await get(url, '/v2/todos/abc')).status, 422);
    },
  );
});

describe('concurrency', { timeout: SUITE_TIMEOUT_MS }, () => {
  onTodo('concurrent POSTs never get the same id', async (url) => {
    const answers = await Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        postJson(url, '/todos', JSON.stringify({ title: `t${i}` })),
      ),
    );
    const ids = answers.map((res) => (json(res) as { id: number }).id);
    assert.equal(new Set(ids).size, 100);
    assert.deepEqual(
      [...ids].sort((a, b) => a - b),
      Array.from({ length: 100 }, (_, i) => i + 2),
    );
  });

  onTodo('of concurrent PUTs on one new id exactly one answers 201', async (url) => {
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => postJson(url, '/todos/50', '{"title":"race"}', 'PUT')),
    );
    assert.equal(answers.filter((res) => res.status === 201).length, 1);
    assert.equal(answers.filter((res) => res.status === 200).length, 19);
  });
});

describe('documentation', { timeout: SUITE_TIMEOUT_MS }, () => {
  let docsServer: RunningServer;
  before(async () => {
    docsServer = await startTestServer({ service: 'todo' });
  });
  after(async () => {
    await docsServer.close();
  });

  test('each operation lists exactly the codes of the spec table as three-digit keys', async () => {
    const doc = json(await get(docsServer.url, '/openapi.json')) as {
      paths: Record<string, Record<string, { responses: object }>>;
    };
    const codes = (method: string, path: string): string[] =>
      Object.keys(doc.paths[path]?.[method]?.responses ?? {})
        .filter((code) => /^\d{3}$/.test(code))
        .sort();
    assert.deepEqual(codes('get', '/todos/{todo_id}'), ['200', '422']);
    assert.deepEqual(codes('put', '/todos/{todo_id}'), ['200', '422']);
    assert.deepEqual(codes('delete', '/todos/{todo_id}'), ['204', '422']);
    assert.deepEqual(codes('post', '/todos'), ['201', '422']);
    assert.deepEqual(codes('delete', '/oops/{todo_id}'), ['204', '422']);
    assert.deepEqual(codes('post', '/todos/{todo_id}/done'), ['200', '422']);
    assert.deepEqual(codes('get', '/v2/todos/{todo_id}'), ['200', '404', '422']);
  });

  test("every other answer is described by ranges: PUT's 201 by 2XX, a read's 304 by 3XX, a key's answers by 4XX, other errors by default", async () => {
    const doc = json(await get(docsServer.url, '/openapi.json')) as {
      paths: Record<string, Record<string, { responses: object }>>;
    };
    const others = Object.entries(doc.paths).flatMap(([path, operations]) =>
      Object.entries(operations).map(([method, operation]) => [
        `${method} ${path}`,
        Object.keys(operation.responses)
          .filter((code) => !/^\d{3}$/.test(code))
          .sort(),
      ]),
    );
    assert.deepEqual(Object.fromEntries(others), {
      'get /todos/{todo_id}': ['3XX', 'default'],
      'put /todos/{todo_id}': ['2XX', '4XX', 'default'],
      'delete /todos/{todo_id}': ['4XX', 'default'],
      'post /todos': ['4XX', 'default'],
      'delete /oops/{todo_id}': ['default'],
      'post /todos/{todo_id}/done': ['4XX', 'default'],
      'get /v2/todos/{todo_id}': ['3XX', 'default'],
    });
  });

  test("v2's 404 is documented with the Message model and 'No todo with this id'", async () => {
    const doc = json(await get(docsServer.url, '/openapi.json')) as {
      paths: Record<
        string,
        Record<string, { responses: Record<string, { description: string; content: unknown }> }>
      >;
      components: { schemas: Record<string, unknown> };
    };
    const notFound = doc.paths['/v2/todos/{todo_id}']?.get?.responses['404'];
    assert.equal(notFound?.description, 'No todo with this id');
    assert.deepEqual(notFound?.content, {
      'application/json': {
        schema: { $ref: '#/components/schemas/Message' },
        examples: {
          HTTP_404: { summary: '404 Todo not found', value: { detail: 'Todo not found' } },
        },
      },
    });
    assert.deepEqual(doc.components.schemas.Message, {
      properties: { detail: { type: 'string', title: 'Detail' } },
      type: 'object',
      required: ['detail'],
      title: 'Message',
    });
  });

  test('the document says what the service takes and does: lax booleans for done, done in every answer, /oops deleting without a check', async () => {
    type Schema = { properties: Record<string, { description?: string }>; required: string[] };
    const doc = json(await get(docsServer.url, '/openapi.json')) as {
      paths: Record<string, Record<string, { description?: string }>>;
      components: { schemas: Record<string, Schema> };
    };
    const lax = doc.components.schemas.TodoIn?.properties.done?.description ?? '';
    for (const accepted of ['the numbers 1 and 0', '"yes"', '"off"', 'in any case'])
      assert.ok(lax.includes(accepted), `done's description says ${accepted}`);
    // What the description says is what the service does: "yes" creates a done item, "2" is
    // refused.
    assert.equal(
      (
        json(await postJson(docsServer.url, '/todos', '{"title":"lax","done":"yes"}')) as {
          done: boolean;
        }
      ).done,
      true,
    );
    assert.equal(
      (await postJson(docsServer.url, '/todos', '{"title":"lax","done":"2"}')).status,
      422,
    );
    assert.deepEqual(doc.components.schemas.Todo?.required, ['id', 'title', 'done']);
    const oops = doc.paths['/oops/{todo_id}']?.delete?.description ?? '';
    assert.match(oops, /whether or not it existed/);
    assert.match(oops, /really removed/);
  });

  test('/docs and /redoc are HTML pages whose scripts are served locally, not from a CDN', async () => {
    for (const page of ['/docs', '/redoc']) {
      const res = await get(docsServer.url, page);
      assert.equal(res.status, 200);
      assert.equal(res.headers['content-type'], 'text/html; charset=utf-8');
      assert.doesNotMatch(res.text, /https?:\/\//, `${page} refers to another host`);
      for (const [, src] of res.text.matchAll(/(?:src|href)="([^"]+)"/g)) {
        if ((src as string).startsWith('data:')) continue; // inline: nothing to fetch
        const asset = await get(docsServer.url, src as string);
        assert.equal(asset.status, 200, `${page} needs ${src}`);
        assert.ok(asset.body.length > 1000, `${src} is empty`);
      }
    }
  });
});
