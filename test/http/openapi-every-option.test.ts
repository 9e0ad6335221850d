// The documents with every option on say what the services read and send, each header once: every
// path parameter on every operation (a preflight's too), the preflight's 405, the request headers
// that change an answer (Origin on every operation under CORS, the proxy's header behind trusted
// proxies, If-None-Match: * for a PUT that creates under --require-if-match), a deprecated
// operation marked with its headers and its 410, and one description for each response header
// however many rows carry it.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { get, json } from '../support/http.js';
import { startTestServer } from '../support/server.js';
import { EVERY_OPTION_MODES } from '../support/every-option.js';
import { SUITE_TIMEOUT_MS } from '../support/time-limits.js';

interface Parameter {
  readonly name?: string;
  readonly in?: string;
  readonly required?: boolean;
  readonly description?: string;
  readonly $ref?: string;
}
interface Row {
  readonly headers?: Readonly<Record<string, { readonly description?: string }>>;
  readonly content?: Readonly<Record<string, { readonly examples?: Record<string, unknown> }>>;
}
interface Operation {
  readonly parameters?: readonly Parameter[];
  readonly responses: Readonly<Record<string, Row>>;
  readonly deprecated?: boolean;
}
type Document = { readonly paths: Readonly<Record<string, Readonly<Record<string, Operation>>>> };

const documents = new Map<string, Document>();

async function documentOf(mode: string): Promise<Document> {
  const known = documents.get(mode);
  if (known !== undefined) return known;
  const server = await startTestServer(
    EVERY_OPTION_MODES[mode] as NonNullable<(typeof EVERY_OPTION_MODES)[string]>,
  );
  try {
    const res = await get(server.url, '/openapi.json');
    assert.equal(res.status, 200);
    const document = json(res) as Document;
    documents.set(mode, document);
    return document;
  } finally {
    await server.close();
  }
}

const operationsOf = (document: Document): [string, string, Operation][] =>
  Object.entries(document.paths).flatMap(([path, operations]) =>
    Object.entries(operations).map(([method, operation]): [string, string, Operation] => [
      path,
      method,
      operation,
    ]),
  );

const headerParameter = (operation: Operation, name: string): Parameter | undefined =>
  operation.parameters?.find((parameter) => parameter.in === 'header' && parameter.name === name);

describe('the documents with every option on', { timeout: SUITE_TIMEOUT_MS }, () => {
  for (const mode of Object.keys(EVERY_OPTION_MODES)) {
    test(`${mode}: every operation declares each parameter of its path, the preflight's included`, async () => {
      for (const [path, method, operation] of operationsOf(await documentOf(mode))) {
        const declared = (operation.parameters ?? [])
          .filter((parameter) => parameter.in === 'path')
          .map((parameter) => parameter.name);
        const expected = [...path.matchAll(/\{([^}]+)\}/g)].map((match) => match[1]);
        assert.deepEqual(declared, expected, `${method} ${path}`);
      }
    });

    test(`${mode}: each response header has one description, however many rows carry it`, async () => {
      const descriptions = new Map<string, Set<string>>();
      for (const [, , operation] of operationsOf(await documentOf(mode)))
        for (const row of Object.values(operation.responses))
          for (const [name, header] of Object.entries(row.headers ?? {}))
            if (header.description !== undefined)
              (descriptions.get(name) ?? descriptions.set(name, new Set()).get(name))?.add(
                header.description,
              );
      for (const [name, seen] of descriptions)
        assert.equal(seen.size, 1, `${name}: ${[...seen].join(' | ')}`);
      assert.ok(descriptions.has('RateLimit-Policy') && descriptions.has('Deprecation'));
    });

    test(`${mode}: every path has its preflight, with its 204 and the 405 of an origin not listed`, async () => {
      for (const [path, operations] of Object.entries((await documentOf(mode)).paths)) {
        const preflight = operations.options;
        assert.ok(preflight !== undefined, path);
        assert.deepEqual(Object.keys(preflight.responses), ['204', '405', 'default'], path);
        assert.ok(preflight.responses['405']?.headers?.Allow !== undefined, path);
        assert.ok(preflight.responses['204']?.headers?.['Access-Control-Allow-Methods'], path);
      }
    });

    test(`${mode}: every operation reads Origin, and a limited one the trusted proxies' header`, async () => {
      const proxyHeader =
        mode.includes('unified') || mode.includes('problem') ? 'Forwarded' : 'X-Forwarded-For';
      const other = proxyHeader === 'Forwarded' ? 'X-Forwarded-For' : 'Forwarded';
      for (const [path, method, operation] of operationsOf(await documentOf(mode))) {
        assert.ok(headerParameter(operation, 'Origin') !== undefined, `${method} ${path}`);
        if (method === 'options') continue;
        assert.ok(headerParameter(operation, proxyHeader) !== undefined, `${method} ${path}`);
        assert.equal(headerParameter(operation, other), undefined, `${method} ${path}`);
      }
    });
  }

  test('under --require-if-match, a PUT says that a create sends If-None-Match: *, and neither header is required', async () => {
    const put = (await documentOf('todo-default-every-option')).paths['/todos/{todo_id}']?.put;
    assert.ok(put !== undefined);
    const ifMatch = headerParameter(put, 'If-Match');
    const ifNoneMatch = headerParameter(put, 'If-None-Match');
    assert.equal(ifMatch?.required, false);
    assert.equal(ifNoneMatch?.required, false);
    assert.match(ifMatch?.description ?? '', /send If-None-Match: \* instead/);
    assert.match(ifNoneMatch?.description ?? '', /\* on PUT creates only/);
  });

  test('a deprecated operation is marked, its rows carry Deprecation, Sunset and Link, and its sunset is the 410 row; the others are not marked', async () => {
    for (const [mode, deprecated] of [
      ['todo-problem-every-option', 'get /v2/todos/{todo_id}'],
      ['bank-default-every-option', 'get /accounts/{account}/limits'],
    ] as const) {
      for (const [path, method, operation] of operationsOf(await documentOf(mode))) {
        const marked = `${method} ${path}` === deprecated;
        assert.equal(operation.deprecated === true, marked, `${mode}: ${method} ${path}`);
        if (!marked) continue;
        for (const [key, row] of Object.entries(operation.responses))
          for (const name of ['Deprecation', 'Sunset', 'Link'])
            assert.ok(row.headers?.[name] !== undefined, `${mode}: ${key} carries ${name}`);
        const gone = operation.responses['410']?.content ?? {};
        assert.deepEqual(
          Object.values(gone).flatMap((media) => Object.keys(media.examples ?? {})),
          ['OPERATION_SUNSET'],
        );
      }
    }
  });
});
