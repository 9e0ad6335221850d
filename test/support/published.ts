// What the services publish about themselves: the OpenAPI document of every mode and the
// documentation pages. Clients generate code from the documents and people read the pages, so a
// change to either must be deliberate: test/http/published-documents.test.ts compares them with the
// copies in test/fixtures/published, and `npm run docs:record` writes those copies anew after a
// change that was meant (the diff then shows it in review).
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { DEFAULT_IDEMPOTENCY_TTL_MS } from '../../src/features/idempotency/gate.js';
import { get } from './http.js';
import { withServer, type TestServerOptions } from './server.js';

const DIR = new URL('../../../test/fixtures/published/', import.meta.url);

export interface PublishedMode {
  /** The fixture's folder: test/fixtures/published/<name>/. */
  readonly name: string;
  readonly server: TestServerOptions;
  /**
   * The pages recorded: /docs and /redoc once for each title (they differ in nothing else), and
   * /docs/problems in each problem-details mode that has one recorded (it lists its service's own
   * problem types; no other format serves it).
   */
  readonly pages: readonly Page[];
}

/** The pages and the file each is kept in. */
export const PAGES = {
  '/docs': 'docs.html',
  '/redoc': 'redoc.html',
  '/docs/problems': 'problems.html',
} as const;
export type Page = keyof typeof PAGES;

const VIEWERS: readonly Page[] = ['/docs', '/redoc'];

/** Generous: the published modes' tests replay many requests, and none of them is to be refused. */
const RATE_LIMITS = {
  writes: { perSecond: 10_000, burst: 10_000 },
  reads: { perSecond: 10_000, burst: 10_000 },
} as const;

export const MODES: readonly PublishedMode[] = [
  { name: 'todo-default', server: { service: 'todo' }, pages: VIEWERS },
  { name: 'todo-unified', server: { service: 'todo', errors: 'unified' }, pages: [] },
  {
    name: 'todo-unified-catchall',
    server: { service: 'todo', errors: 'unified', catchAll: true },
    pages: [],
  },
  {
    name: 'todo-problem',
    server: { service: 'todo', errors: 'problem' },
    pages: ['/docs/problems'],
  },
  {
    name: 'todo-default-keys-required',
    server: { service: 'todo', idempotency: { required: true, ttlMs: DEFAULT_IDEMPOTENCY_TTL_MS } },
    pages: [],
  },
  {
    name: 'todo-default-if-match-required',
    server: { service: 'todo', requireIfMatch: true },
    pages: [],
  },
  {
    name: 'todo-problem-if-match-required',
    server: { service: 'todo', errors: 'problem', requireIfMatch: true },
    pages: [],
  },
  { name: 'bank-default', server: { service: 'bank' }, pages: VIEWERS },
  { name: 'bank-unified', server: { service: 'bank', errors: 'unified' }, pages: VIEWERS },
  {
    name: 'bank-unified-catchall',
    server: { service: 'bank', errors: 'unified', catchAll: true },
    pages: VIEWERS,
  },
  {
    name: 'bank-problem',
    server: { service: 'bank', errors: 'problem' },
    pages: [...VIEWERS, '/docs/problems'],
  },
  {
    name: 'bank-problem-keys-required',
    server: {
      service: 'bank',
      errors: 'problem',
      idempotency: { required: true, ttlMs: DEFAULT_IDEMPOTENCY_TTL_MS },
    },
    pages: [],
  },
  // Rate limits add a 429 to every limited operation, and the RateLimit fields to its answers.
  {
    name: 'todo-problem-rate-limited',
    server: { service: 'todo', errors: 'problem', rateLimiting: { limits: RATE_LIMITS } },
    pages: ['/docs/problems'],
  },
  {
    name: 'bank-default-rate-limited',
    server: { service: 'bank', rateLimiting: { limits: { writes: RATE_LIMITS.writes } } },
    pages: [],
  },
];

export interface Published {
  /** /openapi.json as served: compact JSON. */
  readonly openapi: string;
  /** Each page the mode records, as served. */
  readonly pages: ReadonlyMap<Page, string>;
}

export async function fetchPublished(mode: PublishedMode): Promise<Published> {
  let published: Published | undefined;
  await withServer(mode.server, async (url) => {
    const openapi = (await get(url, '/openapi.json')).text;
    const pages = new Map<Page, string>();
    for (const page of mode.pages) pages.set(page, (await get(url, page)).text);
    published = { openapi, pages };
  });
  if (published === undefined) throw new Error(`nothing fetched for ${mode.name}`);
  return published;
}

const fileOf = (mode: PublishedMode, name: string): URL => new URL(`${mode.name}/${name}`, DIR);
const pageFileOf = (mode: PublishedMode, page: Page): URL => fileOf(mode, PAGES[page]);

/** The recorded document, kept indented for review, made compact as the service serves it. */
export function recordedDocument(mode: PublishedMode): string {
  return JSON.stringify(JSON.parse(readFileSync(fileOf(mode, 'openapi.json'), 'utf8')));
}

export function recordedPage(mode: PublishedMode, page: Page): string {
  return readFileSync(pageFileOf(mode, page), 'utf8');
}

export function record(mode: PublishedMode, published: Published): void {
  mkdirSync(fileOf(mode, ''), { recursive: true });
  writeFileSync(
    fileOf(mode, 'openapi.json'),
    `${JSON.stringify(JSON.parse(published.openapi), null, 2)}\n`,
  );
  for (const [page, text] of published.pages) writeFileSync(pageFileOf(mode, page), text);
}
