// A SERVER span's words as the HTTP semantic conventions say them (docs/operating.md#traces): the
// query recorded with the conventions' redaction, and methods named by the known-method list that
// OTEL_INSTRUMENTATION_HTTP_KNOWN_METHODS replaces. End to end, through a real OTLP receiver.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { spanOf, withTraced } from '../support/traced-service.js';

async function send(url: string, method: string): Promise<string> {
  const response = await fetch(url, { method });
  await response.arrayBuffer();
  return response.headers.get('x-request-id') as string;
}

test('url.query is recorded with every value replaced by REDACTED, its keys kept: the signed-URL keys the conventions list, and any token', async () => {
  await withTraced([], {}, async (url, receiver) => {
    const query =
      'q=OpenTelemetry&sig=abc&X-Amz-Signature=zz&X-Amz-Credential=c&X-Amz-Security-Token=t&AWSAccessKeyId=AK&Signature=s&X-Goog-Signature=g&access_token=secret&flag&empty=';
    const span = await spanOf(receiver, await send(`${url}/todos/1?${query}`, 'GET'));
    assert.equal(span.attributes['url.path'], '/todos/1');
    assert.equal(
      span.attributes['url.query'],
      'q=REDACTED&sig=REDACTED&X-Amz-Signature=REDACTED&X-Amz-Credential=REDACTED&X-Amz-Security-Token=REDACTED&AWSAccessKeyId=REDACTED&Signature=REDACTED&X-Goog-Signature=REDACTED&access_token=REDACTED&REDACTED&empty=REDACTED',
    );
    const plain = await spanOf(receiver, await send(`${url}/todos/1`, 'GET'));
    assert.equal(plain.attributes['url.query'], undefined);
  });
});

test('a method outside the known ones is _OTHER, beside http.request.method_original, and its span is named HTTP', async () => {
  await withTraced([], {}, async (url, receiver) => {
    const span = await spanOf(receiver, await send(`${url}/todos/1`, 'PROPFIND'));
    assert.equal(span.attributes['http.request.method'], '_OTHER');
    assert.equal(span.attributes['http.request.method_original'], 'PROPFIND');
    assert.match(span.name, /^HTTP( |$)/);
    const known = await spanOf(receiver, await send(`${url}/todos/1`, 'PATCH'));
    assert.equal(known.attributes['http.request.method'], 'PATCH');
    assert.equal(known.attributes['http.request.method_original'], undefined);
  });
});

test('OTEL_INSTRUMENTATION_HTTP_KNOWN_METHODS replaces the known methods, case-sensitively', async () => {
  await withTraced(
    [],
    { OTEL_INSTRUMENTATION_HTTP_KNOWN_METHODS: 'GET, POST' },
    async (url, receiver) => {
      const removed = await spanOf(receiver, await send(`${url}/todos/1`, 'DELETE'));
      assert.equal(removed.attributes['http.request.method'], '_OTHER');
      assert.equal(removed.attributes['http.request.method_original'], 'DELETE');
      assert.equal(removed.name, 'HTTP /todos/{todo_id}');
      const got = await spanOf(receiver, await send(`${url}/todos/1`, 'GET'));
      assert.equal(got.attributes['http.request.method'], 'GET');
      assert.equal(got.name, 'GET /todos/{todo_id}');
    },
  );
  await withTraced(
    [],
    { OTEL_INSTRUMENTATION_HTTP_KNOWN_METHODS: 'get' },
    async (url, receiver) => {
      const got = await spanOf(receiver, await send(`${url}/todos/1`, 'GET'));
      assert.equal(got.attributes['http.request.method'], '_OTHER');
    },
  );
});
