// Each mode's documents speak of its own format and its own service: a problem-details service
// serves /docs/problems with exactly the problem types of its own that its document allows, and
// its document links there; the default and unified formats serve no such page, link to none, and
// explain every code of our own their schemas allow in the document itself. No document names a
// server: the one it is served from is the only one, and Swagger UI then shows no server selector.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ERROR_CATALOGUE, problemType, type ErrorCode } from '../../src/http/catalogue.js';
import { get, json } from '../support/http.js';
import { allowedCodes } from '../support/openapi-check.js';
import { MODES } from '../support/published.js';
import { withServer } from '../support/server.js';
import { SUITE_TIMEOUT_MS } from '../support/time-limits.js';

const isOwn = (code: string): code is ErrorCode =>
  Object.hasOwn(ERROR_CATALOGUE, code) && ERROR_CATALOGUE[code as ErrorCode].own;

describe(
  "each mode's documents point only at pages about its own format and service",
  { timeout: SUITE_TIMEOUT_MS },
  () => {
    for (const mode of MODES) {
      test(mode.name, () =>
        withServer(mode.server, async (url) => {
          const served = await get(url, '/openapi.json');
          const document = json(served) as { servers?: unknown; info: { description: string } };
          assert.equal(document.servers, undefined, 'a servers list');
          const own = [...allowedCodes(document)].filter(isOwn).sort();
          assert.ok(own.length > 0, 'no code of our own allowed: the check below proves nothing');
          const page = await get(url, '/docs/problems');
          if (mode.server.errors === 'problem') {
            assert.match(served.text, /\/docs\/problems/);
            assert.equal(page.status, 200);
            const sections = [...page.text.matchAll(/<section id="([^"]+)">/g)]
              .map((match) => `/docs/problems#${match[1]}`)
              .sort();
            assert.deepEqual(
              sections,
              own.map(problemType).sort(),
              'the page explains exactly the own problem types the document allows',
            );
          } else {
            assert.doesNotMatch(
              served.text,
              /\/docs\/problems/,
              'a link to a page about another format',
            );
            assert.equal(page.status, 404);
            const explained = [...document.info.description.matchAll(/`([A-Z_]+)`/g)]
              .map((match) => match[1] as string)
              .filter(isOwn)
              .sort();
            assert.deepEqual(
              explained,
              own,
              "the description explains exactly the codes of our own the document's schemas allow",
            );
          }
        }),
      );
    }
  },
);
