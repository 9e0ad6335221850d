// The recorded conformance corpus as data-driven tests: every sequence on a freshly started
// server, every request compared with the recorded answer (deviations D1–D9 included).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { send } from '../support/http.js';
import { startTestServer, type TestServerOptions } from '../support/server.js';
import { differences } from './compare.js';
import { loadSequences, rawRequestOf, type CorpusCase } from './corpus.js';
import { SUITE_TIMEOUT_MS } from '../support/time-limits.js';

const TARGETS: Readonly<Record<string, TestServerOptions>> = {
  todo: { service: 'todo' },
  default: { service: 'bank', errors: 'default' },
  unified: { service: 'bank', errors: 'unified' },
  catchall: { service: 'bank', errors: 'unified', catchAll: true },
};

function label(c: CorpusCase): string {
  const tags = c.deviation === undefined ? '' : ` [${[c.deviation].flat().join(',')}]`;
  const path = c.request.path.length > 60 ? `${c.request.path.slice(0, 60)}…` : c.request.path;
  return `${c.id} ${c.request.method} ${path}${tags}${c.note === undefined ? '' : ` — ${c.note}`}`;
}

for (const sequence of loadSequences()) {
  describe(
    `conformance ${sequence.id}: ${sequence.title} (${sequence.target})`,
    { timeout: SUITE_TIMEOUT_MS },
    () => {
      test('every recorded answer is given, in order, on a fresh server', async (t) => {
        const options = TARGETS[sequence.target];
        assert.ok(options, `unknown target ${sequence.target}`);
        const server = await startTestServer(options);
        try {
          for (const c of sequence.requests) {
            const response = await send(server.url, rawRequestOf(c.request));
            await t.test(label(c), () => {
              assert.deepEqual(differences(c, response), []);
            });
          }
        } finally {
          await server.close();
        }
      });
    },
  );
}
