// Every answer a documented operation gives is described by the document and validates against it,
// in every mode: the conformance cases are replayed against each mode's server, and each answer is
// checked against that same server's /openapi.json (status, media type, body, required headers).
// Modes without recorded cases (the to-do service in the unified and problem formats, the bank in
// problem details) get the same requests; there only the document is the judge.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { loadSequences, rawRequestOf, type CorpusSequence } from '../conformance/corpus.js';
import { get, json, send } from '../support/http.js';
import { OpenApiChecker } from '../support/openapi-check.js';
import { startTestServer, type TestServerOptions } from '../support/server.js';
import { SUITE_TIMEOUT_MS } from '../support/time-limits.js';

interface Mode {
  readonly name: string;
  readonly server: TestServerOptions;
  /** The corpus targets whose requests are replayed in this mode. */
  readonly targets: readonly CorpusSequence['target'][];
}

const BANK_TARGETS = ['default', 'unified', 'catchall'] as const;
const MODES: readonly Mode[] = [
  { name: 'to-do, default', server: { service: 'todo' }, targets: ['todo'] },
  { name: 'to-do, unified', server: { service: 'todo', errors: 'unified' }, targets: ['todo'] },
  {
    name: 'to-do, unified + catch-all',
    server: { service: 'todo', errors: 'unified', catchAll: true },
    targets: ['todo'],
  },
  { name: 'to-do, problem', server: { service: 'todo', errors: 'problem' }, targets: ['todo'] },
  { name: 'bank, default', server: { service: 'bank', errors: 'default' }, targets: ['default'] },
  { name: 'bank, unified', server: { service: 'bank', errors: 'unified' }, targets: ['unified'] },
  {
    name: 'bank, unified + catch-all',
    server: { service: 'bank', errors: 'unified', catchAll: true },
    targets: ['catchall'],
  },
  { name: 'bank, problem', server: { service: 'bank', errors: 'problem' }, targets: BANK_TARGETS },
];

const sequences = loadSequences();

describe(
  'every answer of a documented operation validates against its own /openapi.json',
  { timeout: SUITE_TIMEOUT_MS },
  () => {
    for (const mode of MODES) {
      test(mode.name, async () => {
        const found: string[] = [];
        const statuses = new Set<number>();
        let checked = 0;
        for (const sequence of sequences.filter((s) => mode.targets.includes(s.target))) {
          const server = await startTestServer(mode.server);
          try {
            const checker = new OpenApiChecker(json(await get(server.url, '/openapi.json')));
            for (const c of sequence.requests) {
              const res = await send(server.url, rawRequestOf(c.request));
              const operation = checker.operation(c.request.method, c.request.path);
              if (operation === undefined) continue;
              checked += 1;
              statuses.add(res.status);
              for (const problem of checker.problems(operation, res))
                found.push(`${c.id} ${c.request.method} ${c.request.path}: ${problem}`);
            }
          } finally {
            await server.close();
          }
        }
        assert.deepEqual(found, []);
        // The replay must have reached the operations and their errors, or the check proves
        // nothing.
        assert.ok(checked >= 50, `only ${checked} answers checked`);
        assert.ok(
          statuses.has(422) && statuses.has(404),
          `statuses seen: ${[...statuses].join(', ')}`,
        );
      });
    }
  },
);
