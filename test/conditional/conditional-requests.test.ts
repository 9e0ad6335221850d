// The rules of conditional requests (RFC 9110 §13), one test a rule, against real servers: the
// ETag of every to-do representation and of a balance, but none on a PUT's answer (RFC 9110
// §9.3.4: a HEAD reads the new tag), 304 for a read whose If-None-Match matches, 412 for a write
// whose If-Match (or If-None-Match) does not hold, 428 under --require-if-match, each error in all
// three formats, and the order of the checks.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import type { ErrorFormat } from '../../src/http/render.js';
import { get, send, type RawResponse } from '../support/http.js';
import { startTestServer, withServer } from '../support/server.js';
import { SUITE_TIMEOUT_MS } from '../support/time-limits.js';

type Headers = readonly (readonly [string, string])[];
const FORMATS: readonly ErrorFormat['name'][] = ['default', 'unified', 'problem'];
const JSON_BODY: Headers = [['Content-Type', 'application/json']];

const read = (
  url: string,
  path: string,
  headers: Headers = [],
  method = 'GET',
): Promise<RawResponse> => send(url, { method, path, headers });
const put = (
  url: string,
  path: string,
  title: string,
  headers: Headers = [],
): Promise<RawResponse> =>
  send(url, {
    method: 'PUT',
    path,
    headers: [...JSON_BODY, ...headers],
    body: JSON.stringify({ title }),
  });
const del = (url: string, path: string, headers: Headers = []): Promise<RawResponse> =>
  send(url, { method: 'DELETE', path, headers });
const finish = (url: string, path: string, headers: Headers = []): Promise<RawResponse> =>
  send(url, { method: 'POST', path: `${path}/done`, headers });
const tagOf = (res: RawResponse): string => {
  const tag = res.headers.etag;
  assert.ok(typeof tag === 'string', `an ETag on the ${res.status}`);
  return tag;
};
/** The item's current tag, as a client learns it after a PUT: a HEAD, which costs no body. */
const headTag = async (url: string, path: string): Promise<string> =>
  tagOf(await read(url, path, [], 'HEAD'));

/** The error an answer carries, read as each format writes it: [status, code or detail]. */
function errorOf(format: ErrorFormat['name'], res: RawResponse): [number, string] {
  const body = JSON.parse(res.text) as {
    detail?: { code: string };
    error?: { code: string };
    code?: string;
    status?: number;
  };
  if (format === 'problem') {
    assert.equal(res.headers['content-type'], 'application/problem+json');
    assert.equal(body.status, res.status);
  }
  return [
    res.status,
    (format === 'default'
      ? body.detail?.code
      : format === 'unified'
        ? body.error?.code
        : body.code) as string,
  ];
}

/** A 304 as RFC 9110 §15.4.5 has it: the ETag, no body, no Content-Length or Content-Type. */
function assertNotModified(res: RawResponse, tag: string): void {
  assert.equal(res.status, 304);
  assert.equal(res.headers.etag, tag);
  assert.equal(res.body.length, 0);
  assert.equal(res.headers['content-length'], undefined);
  assert.equal(res.headers['content-type'], undefined);
}

describe(
  "validators: every representation but a PUT's answer carries a strong ETag, which every write changes",
  { timeout: SUITE_TIMEOUT_MS },
  () => {
    test('GET, HEAD and the v2 read carry the same strong ETag; HEAD has no body', () =>
      withServer({ service: 'todo' }, async (url) => {
        const tag = tagOf(await get(url, '/todos/1'));
        assert.match(tag, /^"\d+"$/, 'strong: no W/');
        const head = await read(url, '/todos/1', [], 'HEAD');
        assert.equal(head.headers.etag, tag);
        assert.equal(head.body.length, 0);
        assert.equal(tagOf(await get(url, '/v2/todos/1')), tag);
      }));

    test("every kind of write makes a new ETag, the one a read then shows: PUT, done, create, PUT creating (a PUT's read with HEAD)", () =>
      withServer({ service: 'todo' }, async (url) => {
        const seen = [tagOf(await get(url, '/todos/1'))];
        const statuses: number[] = [];
        const replaced = await put(url, '/todos/1', 'changed');
        statuses.push(replaced.status);
        seen.push(await headTag(url, '/todos/1'));
        const finished = await finish(url, '/todos/1');
        statuses.push(finished.status);
        seen.push(tagOf(finished));
        const created = await send(url, {
          method: 'POST',
          path: '/todos',
          headers: JSON_BODY,
          body: '{"title":"new"}',
        });
        statuses.push(created.status);
        seen.push(tagOf(created));
        const createdByPut = await put(url, '/todos/9', 'created by PUT');
        statuses.push(createdByPut.status);
        seen.push(await headTag(url, '/todos/9'));
        assert.deepEqual(statuses, [200, 200, 201, 201]);
        assert.equal(new Set(seen).size, seen.length, `all different: ${seen.join(' ')}`);
        assert.equal(
          tagOf(await get(url, '/todos/1')),
          seen[2],
          "item 1's read shows its last write's tag",
        );
        assert.equal(tagOf(await get(url, '/v2/todos/2')), seen[3]);
        assert.equal(tagOf(await get(url, '/todos/9')), seen[4]);
      }));

    for (const format of FORMATS) {
      test(`${format}: a PUT's answer carries no ETag (RFC 9110 §9.3.4); HEAD then shows the new tag, which the next write may name`, () =>
        withServer({ service: 'todo', errors: format }, async (url) => {
          const before = tagOf(await get(url, '/todos/1'));
          const replaced = await put(url, '/todos/1', 'changed', [['If-Match', before]]);
          assert.equal(replaced.status, 200);
          assert.equal(replaced.text, '{"id":1,"title":"changed","done":false}');
          assert.equal(replaced.headers.etag, undefined, "a replacing PUT's 200 has no ETag");
          const after = await headTag(url, '/todos/1');
          assert.match(after, /^"\d+"$/, 'strong: no W/');
          assert.notEqual(after, before, 'the PUT made a new version');
          assert.equal(tagOf(await get(url, '/todos/1')), after, 'HEAD and GET agree');
          const created = await put(url, '/todos/5', 'created by PUT');
          assert.equal(created.status, 201);
          assert.equal(created.text, '{"id":5,"title":"created by PUT","done":false}');
          assert.equal(created.headers.etag, undefined, "a creating PUT's 201 has no ETag");
          assert.notEqual(await headTag(url, '/todos/5'), after);
          assert.deepEqual(
            errorOf(format, await put(url, '/todos/1', 'lost', [['If-Match', before]])),
            [412, 'PRECONDITION_FAILED'],
          );
          assert.equal((await put(url, '/todos/1', 'again', [['If-Match', after]])).status, 200);
          assert.equal((await get(url, '/todos/1')).text, '{"id":1,"title":"again","done":false}');
        }));
    }

    test("a stale If-Match never matches an item created again under a deleted item's id", () =>
      withServer({ service: 'todo' }, async (url) => {
        const created = await send(url, {
          method: 'POST',
          path: '/todos',
          headers: JSON_BODY,
          body: '{"title":"two"}',
        });
        const old = tagOf(created);
        assert.equal((await del(url, '/todos/2')).status, 204);
        const again = await send(url, {
          method: 'POST',
          path: '/todos',
          headers: JSON_BODY,
          body: '{"title":"two"}',
        });
        assert.equal((JSON.parse(again.text) as { id: number }).id, 2, 'the id was used again');
        assert.notEqual(tagOf(again), old);
        assert.equal((await put(url, '/todos/2', 'stale', [['If-Match', old]])).status, 412);
      }));

    test('a keyed create carries its ETag, and its replay carries the same one after the item changed', () =>
      withServer({ service: 'todo' }, async (url) => {
        const create = () =>
          send(url, {
            method: 'POST',
            path: '/todos',
            headers: [...JSON_BODY, ['Idempotency-Key', 'k1']],
            body: '{"title":"keyed"}',
          });
        const first = await create();
        assert.equal(first.status, 201);
        await put(url, '/todos/2', 'changed since');
        const replay = await create();
        assert.equal(replay.headers['idempotent-replayed'], 'true');
        assert.equal(replay.headers.etag, tagOf(first));
        assert.equal(replay.text, first.text);
      }));

    test('a balance carries an ETag, answers 304 while it holds, and a withdrawal changes it', () =>
      withServer({ service: 'bank' }, async (url) => {
        const tag = tagOf(await get(url, '/accounts/alice'));
        assertNotModified(await read(url, '/accounts/alice', [['If-None-Match', tag]]), tag);
        assert.equal((await send(url, { method: 'POST', path: '/withdraw/alice/10' })).status, 200);
        const after = await read(url, '/accounts/alice', [['If-None-Match', tag]]);
        assert.equal(after.status, 200);
        assert.equal(after.text, '{"account":"alice","balance":90}');
        assert.notEqual(tagOf(after), tag);
      }));
  },
);

describe(
  'reads: If-None-Match answers 304 while the tag is current',
  { timeout: SUITE_TIMEOUT_MS },
  () => {
    test('the current tag, *, a list holding it, and its weak form answer 304 with the ETag and no body, HEAD too', () =>
      withServer({ service: 'todo' }, async (url) => {
        const tag = tagOf(await get(url, '/todos/1'));
        for (const value of [tag, '*', `"nope", ${tag}`, `W/${tag}`]) {
          assertNotModified(await read(url, '/todos/1', [['If-None-Match', value]]), tag);
          assertNotModified(
            await read(url, '/v2/todos/1', [['If-None-Match', value]], 'HEAD'),
            tag,
          );
        }
      }));

    test('a stale or foreign tag answers the normal 200', () =>
      withServer({ service: 'todo' }, async (url) => {
        const before = await get(url, '/todos/1');
        await put(url, '/todos/1', 'changed');
        for (const value of [tagOf(before), '"nope"', 'not a tag']) {
          const res = await read(url, '/todos/1', [['If-None-Match', value]]);
          assert.equal(res.status, 200);
          assert.equal(res.text, '{"id":1,"title":"changed","done":false}');
        }
      }));

    test('a read with an If-Match that does not hold answers 412; one that holds, 200', () =>
      withServer({ service: 'todo' }, async (url) => {
        const tag = tagOf(await get(url, '/todos/1'));
        assert.equal((await read(url, '/todos/1', [['If-Match', '"0"']])).status, 412);
        assert.equal((await read(url, '/todos/1', [['If-Match', tag]])).status, 200);
      }));

    test('a weak tag never satisfies If-Match on a read either, even the current one: 412', () =>
      withServer({ service: 'todo' }, async (url) => {
        const tag = tagOf(await get(url, '/todos/1'));
        assert.equal((await read(url, '/todos/1', [['If-Match', `W/${tag}`]])).status, 412);
        assert.equal((await read(url, '/todos/1', [['If-Match', `W/${tag}, ${tag}`]])).status, 200);
      }));

    test('If-Match is judged before If-None-Match (RFC 9110 §13.2.2): one that fails is 412 even when If-None-Match matches', () =>
      withServer({ service: 'todo' }, async (url) => {
        const tag = tagOf(await get(url, '/todos/1'));
        const both = (ifMatch: string): Promise<RawResponse> =>
          read(url, '/todos/1', [
            ['If-Match', ifMatch],
            ['If-None-Match', tag],
          ]);
        assert.equal((await both('"nope"')).status, 412);
        assertNotModified(await both(tag), tag);
      }));
  },
);

describe(
  'writes: If-Match and If-None-Match are checked with the write; a failed one is 412 and changes nothing',
  { timeout: SUITE_TIMEOUT_MS },
  () => {
    for (const format of FORMATS) {
      test(`${format}: PUT, DELETE and done with a stale If-Match answer 412 PRECONDITION_FAILED, and the item is unchanged`, () =>
        withServer({ service: 'todo', errors: format }, async (url) => {
          const first = await get(url, '/todos/1');
          const stale = tagOf(first);
          assert.equal((await put(url, '/todos/1', 'second')).status, 200);
          const current = await headTag(url, '/todos/1');
          const answers = [
            await put(url, '/todos/1', 'lost', [['If-Match', stale]]),
            await del(url, '/todos/1', [['If-Match', stale]]),
            await finish(url, '/todos/1', [['If-Match', stale]]),
          ];
          for (const res of answers)
            assert.deepEqual(errorOf(format, res), [412, 'PRECONDITION_FAILED']);
          const now = await get(url, '/todos/1');
          assert.equal(now.text, '{"id":1,"title":"second","done":false}');
          assert.equal(tagOf(now), current);
        }));
    }

    test("the current tag lets each write through; done's answer carries the new tag, a PUT's is read with HEAD", () =>
      withServer({ service: 'todo' }, async (url) => {
        const replaced = await put(url, '/todos/1', 'second', [
          ['If-Match', tagOf(await get(url, '/todos/1'))],
        ]);
        assert.equal(replaced.status, 200);
        const current = await headTag(url, '/todos/1');
        const finished = await finish(url, '/todos/1', [['If-Match', `"0", ${current}`]]);
        assert.equal(finished.status, 200);
        assert.equal(finished.text, '{"id":1,"title":"second","done":true}');
        assert.equal((await del(url, '/todos/1', [['If-Match', tagOf(finished)]])).status, 204);
        assert.equal((await get(url, '/todos/1')).status, 404);
      }));

    test('a weak tag never matches If-Match, even the current one', () =>
      withServer({ service: 'todo' }, async (url) => {
        const tag = tagOf(await get(url, '/todos/1'));
        assert.equal((await put(url, '/todos/1', 'weak', [['If-Match', `W/${tag}`]])).status, 412);
        assert.equal((await get(url, '/todos/1')).text, '{"id":1,"title":"Buy milk","done":false}');
      }));

    test('a tag with a leading zero names no version: "07" is not "7", for If-Match or If-None-Match', () =>
      withServer({ service: 'todo' }, async (url) => {
        const tag = tagOf(await get(url, '/todos/1'));
        const padded = `"0${tag.slice(1)}`;
        assert.equal((await put(url, '/todos/1', 'padded', [['If-Match', padded]])).status, 412);
        assert.equal((await get(url, '/todos/1')).text, '{"id":1,"title":"Buy milk","done":false}');
        assert.equal(
          (await put(url, '/todos/1', 'not refused', [['If-None-Match', padded]])).status,
          200,
        );
      }));

    test('If-Match: * on an absent item is 412 and creates nothing; on an existing one it replaces', () =>
      withServer({ service: 'todo' }, async (url) => {
        assert.equal((await put(url, '/todos/5', 'absent', [['If-Match', '*']])).status, 412);
        assert.equal((await get(url, '/todos/5')).status, 404);
        assert.equal((await put(url, '/todos/1', 'present', [['If-Match', '*']])).status, 200);
      }));

    test('If-None-Match: * on PUT creates only an absent item: 201, then 412', () =>
      withServer({ service: 'todo' }, async (url) => {
        assert.equal((await put(url, '/todos/5', 'first', [['If-None-Match', '*']])).status, 201);
        assert.equal((await put(url, '/todos/5', 'second', [['If-None-Match', '*']])).status, 412);
        assert.equal((await get(url, '/todos/5')).text, '{"id":5,"title":"first","done":false}');
      }));
  },
);

describe(
  '428: --require-if-match makes PUT of an existing item and DELETE name a version',
  { timeout: SUITE_TIMEOUT_MS },
  () => {
    for (const format of FORMATS) {
      test(`${format}: PUT of an existing item and DELETE without If-Match answer 428 PRECONDITION_REQUIRED and change nothing`, () =>
        withServer({ service: 'todo', errors: format, requireIfMatch: true }, async (url) => {
          assert.deepEqual(errorOf(format, await put(url, '/todos/1', 'blind')), [
            428,
            'PRECONDITION_REQUIRED',
          ]);
          assert.deepEqual(errorOf(format, await del(url, '/todos/1')), [
            428,
            'PRECONDITION_REQUIRED',
          ]);
          assert.equal(
            (await get(url, '/todos/1')).text,
            '{"id":1,"title":"Buy milk","done":false}',
          );
        }));
    }

    test('with it, a PUT creating an item, a finish, and any write naming a version need no more', () =>
      withServer({ service: 'todo', requireIfMatch: true }, async (url) => {
        assert.equal((await put(url, '/todos/5', 'new')).status, 201);
        assert.equal((await finish(url, '/todos/5')).status, 200);
        const tag = tagOf(await get(url, '/todos/1'));
        assert.equal((await put(url, '/todos/1', 'named', [['If-Match', tag]])).status, 200);
        assert.equal(
          (await put(url, '/todos/1', 'stale', [['If-Match', tag]])).status,
          412,
          'a stale version is 412, not 428',
        );
      }));

    test('only If-Match, or If-None-Match: * on a create, names a version: an If-None-Match naming tags is 428 on an existing item', () =>
      withServer({ service: 'todo', requireIfMatch: true }, async (url) => {
        const before = (await get(url, '/todos/1')).text;
        assert.equal(
          (await del(url, '/todos/1', [['If-None-Match', '"x"']])).status,
          428,
          'a DELETE naming a tag it refuses',
        );
        assert.equal(
          (await put(url, '/todos/1', 'blind', [['If-None-Match', '"999"']])).status,
          428,
          'a PUT naming a tag it refuses',
        );
        assert.equal(
          (await put(url, '/todos/1', 'blind', [['If-None-Match', 'W/"1", "2"']])).status,
          428,
          'a list of tags',
        );
        assert.equal((await get(url, '/todos/1')).text, before, 'nothing changed');
        assert.equal(
          (await put(url, '/todos/1', 'blind', [['If-None-Match', '*']])).status,
          412,
          '* on an existing item: the create does not hold',
        );
        assert.equal(
          (await put(url, '/todos/7', 'new', [['If-None-Match', '*']])).status,
          201,
          '* on a create',
        );
        assert.equal(
          (await put(url, '/todos/8', 'new', [['If-None-Match', '"3"']])).status,
          201,
          'a create needs no version whatever it names',
        );
      }));

    test('without it (the default), a write without If-Match goes through as before', () =>
      withServer({ service: 'todo' }, async (url) => {
        assert.equal((await put(url, '/todos/1', 'blind')).status, 200);
        assert.equal((await del(url, '/todos/1')).status, 204);
      }));
  },
);

describe(
  'the order of the checks: 405, 422, 404 and 409 before 412 and 428 (RFC 9110 §13.2.1)',
  { timeout: SUITE_TIMEOUT_MS },
  () => {
    test('405 and 422 come before any condition: a stale If-Match does not change them', () =>
      withServer({ service: 'todo', requireIfMatch: true }, async (url) => {
        assert.equal(
          (await send(url, { method: 'PATCH', path: '/todos/1', headers: [['If-Match', '"0"']] }))
            .status,
          405,
        );
        assert.equal((await put(url, '/todos/abc', 'x', [['If-Match', '"0"']])).status, 422);
        const badBody = await send(url, {
          method: 'PUT',
          path: '/todos/1',
          headers: [...JSON_BODY, ['If-Match', '"0"']],
          body: '{"done":false}',
        });
        assert.equal(badBody.status, 422);
        assert.equal((await put(url, '/todos/abc', 'x')).status, 422, '422 before 428');
      }));

    test('404 comes before 412 and 428: a DELETE or finish of a missing item is 404 whatever it names', () =>
      withServer({ service: 'todo', requireIfMatch: true }, async (url) => {
        assert.equal((await del(url, '/todos/99', [['If-Match', '"1"']])).status, 404);
        assert.equal((await del(url, '/todos/99', [['If-Match', '*']])).status, 404);
        assert.equal((await del(url, '/todos/99')).status, 404);
        assert.equal((await finish(url, '/todos/99', [['If-Match', '"1"']])).status, 404);
        assert.equal((await read(url, '/todos/99', [['If-Match', '"1"']])).status, 404);
      }));

    test('409 comes before 412: finishing a done item is 409 whatever it names', () =>
      withServer({ service: 'todo' }, async (url) => {
        const done = await finish(url, '/todos/1');
        assert.equal((await finish(url, '/todos/1', [['If-Match', '"0"']])).status, 409);
        assert.equal((await finish(url, '/todos/1', [['If-Match', tagOf(done)]])).status, 409);
      }));

    test('POST /todos takes no condition: If-Match is ignored there', () =>
      withServer({ service: 'todo' }, async (url) => {
        const res = await send(url, {
          method: 'POST',
          path: '/todos',
          headers: [...JSON_BODY, ['If-Match', '"0"']],
          body: '{"title":"x"}',
        });
        assert.equal(res.status, 201);
      }));
  },
);

describe(
  'the documents describe the conditional answers in every mode',
  { timeout: SUITE_TIMEOUT_MS },
  () => {
    type Operation = {
      responses: Record<
        string,
        {
          headers?: Record<string, unknown>;
          content?: Record<string, { examples?: Record<string, unknown> }>;
        }
      >;
    };
    const operation = async (url: string, path: string, method: string): Promise<Operation> =>
      (
        JSON.parse((await get(url, '/openapi.json')).text) as {
          paths: Record<string, Record<string, Operation>>;
        }
      ).paths[path]?.[method] as Operation;
    const examples = (op: Operation): string[] =>
      Object.values(op.responses).flatMap((row) =>
        Object.values(row.content ?? {}).flatMap((media) => Object.keys(media.examples ?? {})),
      );

    test("reads list a 304 (3XX, with ETag, no content) and 412; POST /todos and done an ETag on their success, PUT's success none (RFC 9110 §9.3.4); writes 412; 428 only with the option", async () => {
      for (const requireIfMatch of [false, true]) {
        await withServer({ service: 'todo', errors: 'unified', requireIfMatch }, async (url) => {
          const readOp = await operation(url, '/todos/{todo_id}', 'get');
          assert.deepEqual(Object.keys(readOp.responses['3XX']?.headers ?? {}), [
            'ETag',
            'X-Request-Id',
          ]);
          assert.equal(readOp.responses['3XX']?.content, undefined);
          assert.ok(readOp.responses['200']?.headers?.ETag !== undefined);
          assert.ok(examples(readOp).includes('PRECONDITION_FAILED'));
          for (const [path, method] of [
            ['/todos/{todo_id}', 'put'],
            ['/todos/{todo_id}', 'delete'],
            ['/todos/{todo_id}/done', 'post'],
          ] as const) {
            const op = await operation(url, path, method);
            assert.ok(examples(op).includes('PRECONDITION_FAILED'), `${method} ${path} lists 412`);
            assert.equal(
              examples(op).includes('PRECONDITION_REQUIRED'),
              requireIfMatch && method !== 'post',
              `${method} ${path} lists 428 only when it can answer it`,
            );
          }
          const replace = await operation(url, '/todos/{todo_id}', 'put');
          for (const status of ['200', '2XX']) {
            assert.ok(replace.responses[status] !== undefined, `PUT lists its ${status}`);
            assert.equal(
              replace.responses[status]?.headers?.ETag,
              undefined,
              `PUT's ${status} declares no ETag`,
            );
          }
          for (const [path, method, status] of [
            ['/todos', 'post', '201'],
            ['/todos/{todo_id}/done', 'post', '200'],
            ['/todos/{todo_id}', 'get', '200'],
            ['/v2/todos/{todo_id}', 'get', '200'],
          ] as const)
            assert.ok(
              (await operation(url, path, method)).responses[status]?.headers?.ETag !== undefined,
              `${method} ${path}'s ${status} declares its ETag`,
            );
        });
      }
      const server = await startTestServer({ service: 'bank' });
      try {
        const balance = await operation(server.url, '/accounts/{account}', 'get');
        assert.ok(balance.responses['3XX']?.headers?.ETag !== undefined);
      } finally {
        await server.close();
      }
    });
  },
);

describe('validators survive a restart', { timeout: SUITE_TIMEOUT_MS }, () => {
  test('a tag read before a restart is still current after it, on the same SQLite file', async () => {
    const folder = await mkdtemp(join(tmpdir(), 'etag-restart-'));
    const db = { kind: 'sqlite', path: join(folder, 'todo.sqlite') } as const;
    try {
      let tag = '';
      await withServer({ service: 'todo', db }, async (url) => {
        assert.equal((await put(url, '/todos/1', 'kept')).status, 200);
        tag = await headTag(url, '/todos/1');
      });
      await withServer({ service: 'todo', db }, async (url) => {
        assertNotModified(await read(url, '/todos/1', [['If-None-Match', tag]]), tag);
        assert.equal((await put(url, '/todos/1', 'after', [['If-Match', tag]])).status, 200);
      });
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  });
});
