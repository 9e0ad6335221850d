// Request ids as a client and an operator meet them: every answer carries X-Request-Id; a safe
// incoming id is kept, anything else is replaced by a fresh UUID and never echoed; and the log of
// a request, a 500's included, carries the same id.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { isAcceptableRequestId } from '../../src/http/request-id.js';
import { jsonString } from '../../src/common/json-string.js';
import { send, type RawRequest, type RawResponse } from '../support/http.js';
import { FAILURE_TEXT, withFaultyService } from '../support/faulty-service.js';
import { withServer } from '../support/server.js';
import { SUITE_TIMEOUT_MS } from '../support/time-limits.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

const withId = (req: RawRequest, id: string): RawRequest => ({
  ...req,
  headers: [...(req.headers ?? []), ['X-Request-Id', id]],
});

describe('request ids', { timeout: SUITE_TIMEOUT_MS }, () => {
  test('every answer carries X-Request-Id: success, 201, 204, 307, 404, 405, 413, 422, HEAD and the docs', async () => {
    await withServer({ service: 'todo' }, async (url) => {
      const requests: [RawRequest, number][] = [
        [{ method: 'GET', path: '/todos/1' }, 200],
        [
          {
            method: 'POST',
            path: '/todos',
            headers: [['Content-Type', 'application/json']],
            body: '{"title":"x"}',
          },
          201,
        ],
        [{ method: 'DELETE', path: '/todos/2' }, 204],
        [{ method: 'GET', path: '/todos/1/' }, 307],
        [{ method: 'GET', path: '/nowhere' }, 404],
        [{ method: 'PATCH', path: '/todos/1' }, 405],
        [
          {
            method: 'POST',
            path: '/todos',
            headers: [
              ['Content-Type', 'application/json'],
              ['Content-Length', String(2 * 1024 * 1024)],
            ],
          },
          413,
        ],
        [
          {
            method: 'POST',
            path: '/todos',
            headers: [['Content-Type', 'application/json']],
            body: '{}',
          },
          422,
        ],
        [{ method: 'HEAD', path: '/todos/1' }, 200],
        [{ method: 'GET', path: '/docs' }, 200],
        [{ method: 'GET', path: '/openapi.json' }, 200],
        [{ method: 'GET', path: '/healthz' }, 200],
      ];
      for (const [req, status] of requests) {
        const res = await send(url, req);
        assert.equal(res.status, status, `${req.method} ${req.path}`);
        assert.match(String(res.headers['x-request-id']), UUID, `${req.method} ${req.path}`);
      }
    });
  });

  test('503 and 500 answers carry X-Request-Id too', async () => {
    await withFaultyService({}, async (url) => {
      for (const path of ['/unavailable', '/readyz', '/boom']) {
        const res = await send(url, { method: 'GET', path });
        assert.equal(res.status, path === '/boom' ? 500 : 503, path);
        assert.match(String(res.headers['x-request-id']), UUID, path);
      }
    });
  });

  test('an incoming id of 1 to 128 characters from [A-Za-z0-9._:-] is kept', async () => {
    await withServer({ service: 'todo' }, async (url) => {
      for (const id of [
        'a',
        'req-42',
        'trace.id_7:span-9',
        'A'.repeat(128),
        '0123456789',
        '...',
        'Z:z',
      ]) {
        const res = await send(url, withId({ method: 'GET', path: '/todos/1' }, id));
        assert.equal(res.headers['x-request-id'], id);
      }
    });
  });

  test('any other incoming id is replaced by a fresh UUID and never echoed', async () => {
    await withServer({ service: 'todo' }, async (url) => {
      for (const id of [
        '',
        'A'.repeat(129),
        'has space',
        'semi;colon',
        'slash/id',
        'quote"',
        'ünï',
        '<script>',
        'a,b',
      ]) {
        const res = await send(url, withId({ method: 'GET', path: '/todos/1' }, id));
        const answered = String(res.headers['x-request-id']);
        assert.match(answered, UUID, JSON.stringify(id));
        assert.notEqual(answered, id);
      }
    });
  });

  test('an id that is kept needs no escape in JSON: the access line writes it between quotes as it is', () => {
    for (let unit = 0; unit <= 0xffff; unit++) {
      const text = String.fromCharCode(unit);
      if (isAcceptableRequestId(text))
        assert.equal(jsonString(text), `"${text}"`, `U+${unit.toString(16)}`);
    }
  });

  test('generated ids are all different, also between the to-do service and the bank', async () => {
    const ids = new Set<string>();
    for (const service of ['todo', 'bank'] as const) {
      await withServer({ service }, async (url) => {
        for (let i = 0; i < 50; i++)
          ids.add(
            String((await send(url, { method: 'GET', path: '/healthz' })).headers['x-request-id']),
          );
      });
    }
    assert.equal(ids.size, 100);
  });

  test('the access line and the log of a 500 carry the id the client got; the 500 body does not show the failure', async () => {
    await withFaultyService({}, async (url, logs) => {
      const res: RawResponse = await send(
        url,
        withId({ method: 'GET', path: '/boom' }, 'trace-500'),
      );
      assert.equal(res.text, 'Internal Server Error');
      const lines = logs.map(
        (line) =>
          JSON.parse(line) as { msg: string; requestId?: string; error?: { message?: string } },
      );
      const failure = lines.find((line) => line.msg === 'unhandled failure');
      const access = lines.find((line) => line.msg === 'request');
      assert.equal(failure?.requestId, 'trace-500');
      assert.equal(failure?.error?.message, FAILURE_TEXT);
      assert.equal(access?.requestId, 'trace-500');
    });
  });
});
