// The areas of mutation testing (`npm run mutation`, stryker.config.mjs): each names the files it
// mutates and the in-process test files that exercise them. Every file of the scope (src/http,
// src/db, the to-do stores, the bank ledgers) is in exactly one area, which
// test/architecture/mutation-areas.test.ts checks. Small enough that one area runs in well under an
// hour at concurrency 1 (db-sqlite, db-postgres, stores and the HTTP areas with httpTests: longer).
//
// Only in-process test files: servers in this process, a real SQLite file and a real PostgreSQL.
// The tests that spawn processes (the CLI, kill -9, several instances, the proxy that cuts the
// database) would multiply the run time and cannot report what they cover.

/** The files whose mutants the areas test: the scope of issue 11. */
export const scope = [
  'src/http/*.ts',
  'src/http/*/*.ts',
  'src/db/*.ts',
  'src/db/*/*.ts',
  'src/features/*.ts',
  'src/features/*/*.ts',
  'src/todo/store-*.ts',
  'src/bank/ledger-*.ts',
];

const serviceTests = [
  '.build/test/todo/todo-service.test.js',
  '.build/test/bank/bank-service.test.js',
];
const sqliteTests = [
  '.build/test/db/*.test.js',
  '.build/test/todo/store-*.test.js',
  '.build/test/bank/ledger-*.test.js',
];
const storeTests = ['.build/test/store/*.test.js', ...sqliteTests];
// Keyed requests on real servers and stores, in this process (test/idempotency/in-flight spawns
// instances and kills one with -9: it stays out).
const keyedTests = [
  '.build/test/idempotency/safe-retries.test.js',
  '.build/test/features/{idempotency-key,idempotency-gate,replay-cache}.test.js',
];
// Two slow files stay out: hostile-input (6,000 random requests, 10 s) guards against crashes and
// leaks, which the contract tests pin down more precisely; openapi-responses (the corpus in every
// mode, each answer validated by Ajv, 36 s) checks the documents, which the conformance replay and
// the service tests check for the answers themselves at a fraction of the time per mutant.
const httpTests = [
  '.build/test/http/!(hostile-input|openapi-responses).test.js',
  '.build/test/features/!(tracing|tracing-options|tracing-context|tracing-conventions|tracing-backoff|otlp-encoding).test.js',
  '.build/test/conformance/*.test.js',
  ...serviceTests,
];
// The JSON decoder and encoder are pinned by their own tests (one a differential test against an
// independent parser) and by the conformance corpus, whose bodies are compared byte for byte; every
// other HTTP test reaches them through a request only, and would triple the time per mutant (1,195
// mutants) for what those tests already check.
const jsonTests = ['.build/test/http/json-*.test.js', '.build/test/conformance/*.test.js'];
// The documents and pages are pinned byte for byte by published-documents (one second for every
// mode), their rules by openapi-rules, checked by Redocly and, for their codes, by the corpus; the
// service tests read them too.
// The other HTTP tests only start servers, which builds the document without looking at it.
const docsTests = [
  '.build/test/http/{published-documents,openapi-rules,openapi-lint}.test.js',
  '.build/test/conformance/*.test.js',
  ...serviceTests,
];

export const areas = {
  // The tests that exercise these files directly: per mutant, a fifth of the time of httpTests.
  'http-limits': {
    mutate: ['src/http/{body,route-table,routing}.ts'],
    tests: [
      '.build/test/http/{contract-layer,route-table,routing,media-type,hostile-clients}.test.js',
      '.build/test/conformance/*.test.js',
      ...serviceTests,
    ],
  },
  // service.ts is an interface only (no mutant); it is listed so that every file has its area.
  'http-contract': {
    mutate: ['src/http/{catalogue,errors,render,route,service}.ts'],
    tests: httpTests,
  },
  'http-pipeline': {
    mutate: [
      'src/http/{app,responses,metrics-route,request-metrics,request-observer,turn-end-writes}.ts',
      'src/http/connections/{connection-guard,ip-address,parser-responses}.ts',
      'src/http/{random-uuids,request-id}.ts',
      'src/http/stages/{pipeline-stages,route-stages,stage}.ts',
      'src/features/{feature,features}.ts',
      'src/features/{cors,cross-origin,deadlines,shedding,lifecycle}/*.ts',
      'src/features/rate-limits/stage.ts',
      'src/features/tracing/{stage,request-trace}.ts',
    ],
    tests: httpTests,
  },
  'http-json': { mutate: ['src/http/json/*.ts'], tests: jsonTests },
  'http-lax': { mutate: ['src/http/validation/*.ts'], tests: httpTests },
  // The OpenAPI document and its pages.
  'http-docs': {
    mutate: [
      'src/http/documents/{docs,openapi,operation-docs,error-schemas,conditions}.ts',
      'src/features/idempotency/docs.ts',
    ],
    tests: [...docsTests, '.build/test/conditional/conditional-requests.test.js'],
  },
  // ETag, 304 and 412 of reads; the tests of every rule, on real servers in this process.
  'http-conditions': {
    mutate: ['src/http/conditions.ts'],
    tests: ['.build/test/conditional/conditional-requests.test.js', ...serviceTests],
  },
  'http-idempotency': {
    mutate: ['src/features/idempotency/{gate,key,replay-cache,stage,feature}.ts'],
    tests: [...keyedTests, ...serviceTests],
  },
  'db-sqlite': {
    mutate: [
      'src/db/{batcher,store-options}.ts',
      'src/db/sqlite/{group-commit,group-commit-worker,group-commit-protocol,batch-writes,sqlite,store,errors,turn-reads}.ts',
      'src/db/{migrations,store-errors,store-health,store-observer,iso-time}.ts',
    ],
    tests: sqliteTests,
  },
  'db-postgres': {
    mutate: [
      'src/db/postgres/{postgres,batched-reads,errors,group-commit,pooler,store,pool-gate,target}.ts',
    ],
    tests: storeTests,
  },
  'db-idempotency': {
    mutate: [
      'src/db/{idempotency-records,idempotency-pruning,rounds}.ts',
      'src/db/sqlite/{idempotency,writes}.ts',
      'src/db/postgres/idempotency.ts',
    ],
    tests: [...keyedTests, ...storeTests],
  },
  stores: {
    mutate: ['src/todo/store-*.ts', 'src/bank/ledger-*.ts'],
    tests: [...storeTests, ...serviceTests],
  },
  // Rate limits: the HTTP part, the shared limiter, the documents' 429 (the tests that spawn
  // processes, the 429s of a real CLI, stay out).
  'rate-limits': {
    mutate: [
      'src/features/rate-limits/{gate,metrics,client-address,forwarded,docs,limiter-for,feature}.ts',
      'src/db/rate-limits-pruning.ts',
      'src/db/postgres/{rate-limits,ride-along}.ts',
    ],
    tests: [
      '.build/test/features/{client-address,rate-limit-gate}.test.js',
      '.build/test/rate-limits/proxy-headers.test.js',
      '.build/test/http/{catalogue,published-documents,openapi-examples}.test.js',
      '.build/test/db/{rate-limits-postgres,rate-limits-pruning,ride-along}.test.js',
    ],
  },
  // Tracing: its options, the SDK's use, the encoder and the export (the OTLP receiver tests, in
  // this process, and the encoder against the SDK's).
  tracing: {
    mutate: ['src/features/tracing/!(stage|request-trace).ts'],
    tests: ['.build/test/features/tracing*.test.js', '.build/test/features/otlp-encoding.test.js'],
  },
};
