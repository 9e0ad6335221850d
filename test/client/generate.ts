// The typed clients' types, generated with openapi-typescript from each mode's /openapi.json into
// test/client/types/ (not committed). `npm test` runs this between its two compilations, so the
// client test is type-checked by `tsc --strict` against the documents the services publish today:
// a change of the API that breaks a generated client breaks the build, and no committed copy can
// go stale. `npm run client-types` writes them on their own (for an editor).
import { mkdirSync, writeFileSync } from 'node:fs';
import openapiTS, { astToString, COMMENT_HEADER } from 'openapi-typescript';
import { get, json } from '../support/http.js';
import { startTestServer, type TestServerOptions } from '../support/server.js';

export const CLIENT_MODES: Readonly<Record<string, TestServerOptions>> = {
  'todo-default': { service: 'todo', errors: 'default' },
  'todo-unified': { service: 'todo', errors: 'unified' },
  'todo-catchall': { service: 'todo', errors: 'unified', catchAll: true },
  'todo-problem': { service: 'todo', errors: 'problem' },
  'bank-default': { service: 'bank', errors: 'default' },
  'bank-unified': { service: 'bank', errors: 'unified' },
  'bank-catchall': { service: 'bank', errors: 'unified', catchAll: true },
  'bank-problem': { service: 'bank', errors: 'problem' },
};

/** The generated types are declarations only, so they are written as .d.ts files. */
const TYPES_DIR = new URL('../../../test/client/types/', import.meta.url);

/** The types of one mode, generated from the document a freshly started server publishes. */
export async function generateTypes(options: TestServerOptions): Promise<string> {
  const server = await startTestServer(options);
  try {
    const document = json(await get(server.url, '/openapi.json')) as Parameters<
      typeof openapiTS
    >[0];
    return COMMENT_HEADER + astToString(await openapiTS(document, { silent: true }));
  } finally {
    await server.close();
  }
}

if (
  process.argv[1] !== undefined &&
  import.meta.url.endsWith(process.argv[1].replace(/\\/g, '/'))
) {
  mkdirSync(TYPES_DIR, { recursive: true });
  for (const [mode, options] of Object.entries(CLIENT_MODES)) {
    writeFileSync(new URL(`${mode}.d.ts`, TYPES_DIR), await generateTypes(options));
  }
  process.stdout.write(`generated client types for ${Object.keys(CLIENT_MODES).join(', ')}\n`);
}
