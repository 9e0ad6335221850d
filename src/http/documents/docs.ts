// The documentation: the OpenAPI document (openapi.ts) at /openapi.json, Swagger UI at /docs, ReDoc
// at /redoc and, with problem details, the service's own problem types at /docs/problems. Their
// scripts come from our own installed packages, so the pages work on a machine without network
// access.
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { ERROR_CATALOGUE, problemType, type ErrorCode } from '../catalogue.js';
import { describeApi, type OpenApiOptions } from './openapi.js';
import { defineRoute, type Reply, type Route } from '../route.js';

const HTML = 'text/html; charset=utf-8';

export type DocsOptions = OpenApiOptions;

// ---------------------------------------------------------------- the pages

/**
 * ReDoc's side menu always shows its maker's logo, loaded from a CDN, and no option turns that off:
 * the bundle we serve points it at an image inline instead, so that /redoc asks nothing of any
 * other host. (A ReDoc that moves the logo elsewhere is caught by the browser test.)
 */
const REDOC_LOGO_URL = 'https://cdn.redoc.ly/redoc/logo-mini.svg';
const INLINE_LOGO =
  'data:image/svg+xml,%3Csvg xmlns=%27http://www.w3.org/2000/svg%27 width=%2716%27 height=%2716%27/%3E';
const offlineRedoc = (bundle: string): string => bundle.replaceAll(REDOC_LOGO_URL, INLINE_LOGO);

/** Pages name an inline icon, so that a browser does not ask for /favicon.ico (a 404, a console error). */
const FAVICON = '<link rel="icon" href="data:,">';

const escapeHtml = (text: string): string =>
  text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function swaggerPage(title: string): string {
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
${FAVICON}
<link type="text/css" rel="stylesheet" href="/docs/swagger-ui.css">
<title>${escapeHtml(title)} - Swagger UI</title>
</head>
<body>
<div id="swagger-ui"></div>
<script src="/docs/swagger-ui-bundle.js"></script>
<script>
window.ui = SwaggerUIBundle({
  url: '/openapi.json',
  dom_id: '#swagger-ui',
  layout: 'BaseLayout',
  deepLinking: true,
  showExtensions: true,
  showCommonExtensions: true,
  oauth2RedirectUrl: window.location.origin + '/docs/oauth2-redirect',
  // The default sends the document to an online validator for a badge: nothing leaves the service.
  validatorUrl: null,
  presets: [SwaggerUIBundle.presets.apis, SwaggerUIBundle.SwaggerUIStandalonePreset],
});
</script>
</body>
</html>
`;
}

function redocPage(title: string): string {
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
${FAVICON}
<title>${escapeHtml(title)} - ReDoc</title>
<style>body { margin: 0; padding: 0; }</style>
</head>
<body>
<noscript>ReDoc requires JavaScript to function. Please enable it to browse the documentation.</noscript>
<redoc spec-url="/openapi.json"></redoc>
<script src="/redoc/redoc.standalone.js"></script>
</body>
</html>
`;
}

/**
 * The page the stable problem type URIs point at: one section per problem of our own that the
 * service answers (its document's codes), so that each service's page explains its own.
 */
function problemsPage(title: string, codes: readonly ErrorCode[]): string {
  const sections = codes
    .filter((code) => ERROR_CATALOGUE[code].own)
    .map((code) => {
      const entry = ERROR_CATALOGUE[code];
      const type = problemType(code);
      return `<section id="${escapeHtml(type.slice(type.indexOf('#') + 1))}">
<h2>${escapeHtml(entry.title)}</h2>
<p><code>type: ${escapeHtml(type)}</code> · <code>status: ${entry.status}</code> · <code>code: ${escapeHtml(code)}</code></p>
<p>${escapeHtml(entry.about ?? '')}</p>
<p>Detail: <code>${escapeHtml(entry.message)}</code></p>
</section>`;
    })
    .join('\n');
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
${FAVICON}
<title>${escapeHtml(title)} - problem types</title>
<style>
body { font-family: system-ui, sans-serif; line-height: 1.5; max-width: 48rem; margin: 2rem auto; padding: 0 1rem; color: #222; }
section { border-top: 1px solid #ddd; padding-top: 0.5rem; }
section:target { background: #fff8dc; }
code { background: #f3f3f3; padding: 0 0.25em; border-radius: 3px; }
</style>
</head>
<body>
<h1>Problem types</h1>
<p>Every error of this service is an RFC 9457 problem (<code>application/problem+json</code>), with its wire code as the <code>code</code> member.
Errors that say no more than their HTTP status have the type <code>about:blank</code>; these are the service's own:</p>
${sections}
</body>
</html>
`;
}

// ---------------------------------------------------------------- the routes

const require = createRequire(import.meta.url);
const packageDir = (name: string): string => dirname(require.resolve(`${name}/package.json`));

/**
 * A file of an installed package, read on first use and kept, optionally rewritten once; a failed
 * read is tried again next time.
 */
function packageFile(
  pkg: string,
  file: string,
  contentType: string,
  rewrite?: (text: string) => string,
): () => Promise<Reply> {
  let cached: Promise<Reply> | undefined;
  return () =>
    (cached ??= readFile(join(packageDir(pkg), file)).then(
      (body) => ({
        status: 200,
        body: rewrite === undefined ? body : rewrite(body.toString('utf8')),
        contentType,
      }),
      (error: unknown) => {
        cached = undefined;
        throw error;
      },
    ));
}

function staticRoute(path: string, reply: () => Reply | Promise<Reply>): Route {
  return defineRoute({
    method: 'GET',
    path,
    status: 200,
    params: {},
    docs: { name: path, hidden: true },
    handle: reply,
  });
}

const problemsRoute = (page: string): Route =>
  staticRoute('/docs/problems', () => ({ status: 200, body: page, contentType: HTML }));

/**
 * The documentation routes. /docs/problems is served with problem details only: it explains the
 * problem type URIs, which no other format's responses carry (their documents list the codes of our
 * own in their description instead).
 */
export function docsRoutes(options: DocsOptions): Route[] {
  const described = describeApi(options);
  const openapi = JSON.stringify(described.openapi);
  const docs = swaggerPage(options.title);
  const redoc = redocPage(options.title);
  const problems =
    options.errorFormat.name === 'problem'
      ? [problemsRoute(problemsPage(options.title, described.codes))]
      : [];
  return [
    staticRoute('/openapi.json', () => ({ status: 200, body: openapi })),
    staticRoute('/docs', () => ({ status: 200, body: docs, contentType: HTML })),
    ...problems,
    staticRoute(
      '/docs/oauth2-redirect',
      packageFile('swagger-ui-dist', 'oauth2-redirect.html', HTML),
    ),
    staticRoute(
      '/docs/oauth2-redirect.js',
      packageFile('swagger-ui-dist', 'oauth2-redirect.js', 'text/javascript; charset=utf-8'),
    ),
    staticRoute(
      '/docs/swagger-ui.css',
      packageFile('swagger-ui-dist', 'swagger-ui.css', 'text/css; charset=utf-8'),
    ),
    staticRoute(
      '/docs/swagger-ui-bundle.js',
      packageFile('swagger-ui-dist', 'swagger-ui-bundle.js', 'text/javascript; charset=utf-8'),
    ),
    staticRoute('/redoc', () => ({ status: 200, body: redoc, contentType: HTML })),
    staticRoute(
      '/redoc/redoc.standalone.js',
      packageFile(
        'redoc',
        'bundles/redoc.standalone.js',
        'text/javascript; charset=utf-8',
        offlineRedoc,
      ),
    ),
  ];
}
