// The documents describe the answers of the edge in the mode that gives them: with a deadline,
// every operation that waits for the store shows the 504 among its other errors; when the service
// sheds load, every operation shows the 503 of a request turned away; without them, none does.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { get, json } from '../support/http.js';
import { withServer } from '../support/server.js';
import { SUITE_TIMEOUT_MS } from '../support/time-limits.js';

type Operations = Record<
  string,
  Record<
    string,
    {
      responses: Record<
        string,
        { content?: Record<string, { examples?: Record<string, unknown> }> }
      >;
    }
  >
>;

/** Operation → the wire codes shown as examples in its `default` row. */
async function defaultRowCodes(url: string): Promise<Map<string, string[]>> {
  const document = json(await get(url, '/openapi.json')) as { paths: Operations };
  const codes = new Map<string, string[]>();
  for (const [path, operations] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(operations)) {
      const content = operation.responses.default?.content ?? {};
      codes.set(
        `${method.toUpperCase()} ${path}`,
        Object.values(content).flatMap((media) => Object.keys(media.examples ?? {})),
      );
    }
  }
  return codes;
}

/** Operations that answer only from what they hold, never waiting for the store. */
const NEVER_WAITS = new Set(['GET /secret', 'GET /accounts/{account}/limits', 'GET /crash']);

describe(
  'the documents show the deadline and shedding answers of the mode',
  { timeout: SUITE_TIMEOUT_MS },
  () => {
    for (const service of ['todo', 'bank'] as const) {
      for (const errors of ['default', 'unified', 'problem'] as const) {
        test(`${service}, ${errors} format`, async () => {
          await withServer(
            { service, errors, deadlineMs: 15_000, shedding: { waitingMax: 100 } },
            async (url) => {
              for (const [operation, codes] of await defaultRowCodes(url)) {
                assert.ok(
                  codes.includes('OVERLOADED'),
                  `${operation} lacks the shed 503: ${codes.join()}`,
                );
                assert.equal(
                  codes.includes('DEADLINE_EXCEEDED'),
                  !NEVER_WAITS.has(operation),
                  `${operation}: ${codes.join()}`,
                );
              }
            },
          );
          await withServer({ service, errors, deadlineMs: 0 }, async (url) => {
            for (const [operation, codes] of await defaultRowCodes(url)) {
              assert.ok(
                !codes.includes('OVERLOADED') && !codes.includes('DEADLINE_EXCEEDED'),
                `${operation}: ${codes.join()}`,
              );
            }
          });
        });
      }
    }
  },
);
