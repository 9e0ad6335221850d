// A recorded request as the kit sends it: one promise each.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { HarRequestRead } from '../../src/migration/har.js';
import { prepare } from '../../src/migration/replay-request.js';
import { showRequest } from '../../src/migration/shown.js';

const recorded = (request: Partial<HarRequestRead>): HarRequestRead => ({
  method: 'GET',
  url: 'http://service.example:8000/todos/1',
  headers: [],
  ...request,
});

test('the path and query are sent as written: no escape or dot segment is normalised', () => {
  const prepared = prepare(recorded({ url: 'https://x.example/a/../todos/%2F1?q=%20&r' }));
  assert.deepEqual(
    prepared.ok ? prepared.request.target : prepared.reason,
    '/a/../todos/%2F1?q=%20&r',
  );
  const bare = prepare(recorded({ url: 'http://x.example?q=1' }));
  assert.equal(bare.ok ? bare.request.target : bare.reason, '/?q=1');
});

test("headers of one connection, Host, Content-Length, Accept-Encoding and HTTP/2's pseudo-headers are not replayed", () => {
  const prepared = prepare(
    recorded({
      headers: [
        { name: ':authority', value: 'x.example' },
        { name: 'Host', value: 'x.example' },
        { name: 'Connection', value: 'keep-alive' },
        { name: 'Accept-Encoding', value: 'gzip, br' },
        { name: 'Content-Length', value: '99' },
        { name: 'Accept', value: 'application/json' },
        { name: 'X-Tenant', value: 'a' },
        { name: 'X-Tenant', value: 'b' },
      ],
    }),
  );
  assert.deepEqual(prepared.ok ? prepared.request.headers : prepared.reason, [
    { name: 'Accept', value: 'application/json' },
    { name: 'X-Tenant', value: 'a' },
    { name: 'X-Tenant', value: 'b' },
  ]);
});

test('a form recorded as params alone is sent url-encoded; under another media type it cannot be sent', () => {
  const form = prepare(
    recorded({
      method: 'POST',
      postData: {
        mimeType: 'application/x-www-form-urlencoded',
        params: [
          { name: 'a', value: '1 2' },
          { name: 'b', value: 'é' },
        ],
      },
    }),
  );
  assert.equal(form.ok ? form.request.body?.toString() : form.reason, 'a=1+2&b=%C3%A9');
  const multipart = prepare(
    recorded({
      method: 'POST',
      postData: { mimeType: 'multipart/form-data', params: [{ name: 'a', value: '1' }] },
    }),
  );
  assert.deepEqual(multipart, {
    ok: false,
    reason: 'its body is recorded as params only, under multipart/form-data',
  });
});

test('the reports show credentials redacted, even those a HAR kept', () => {
  const prepared = prepare(
    recorded({ headers: [{ name: 'Authorization', value: 'Bearer abc.def' }] }),
  );
  assert.ok(prepared.ok);
  assert.deepEqual(prepared.request.headers, [{ name: 'Authorization', value: 'Bearer abc.def' }]);
  assert.deepEqual(showRequest(prepared.request).headers, [
    { name: 'Authorization', value: 'Bearer [REDACTED]' },
  ]);
});
