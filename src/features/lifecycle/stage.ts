// The API lifecycle as a stage (stage.ts), after routing: every response of a deprecated operation
// says so, `Deprecation: @<epoch seconds>` (RFC 9745) with `Sunset: <IMF-fixdate>` (RFC 8594) and a
// `Link` with rel="deprecation" to its documentation; from its sunset on, the operation answers
// 410 OPERATION_SUNSET in the active format and does nothing else. Before routing nothing is known
// of the operation; so a 404 or 405 of its path carries none of it.
import { ApiError } from '../../http/errors.js';
import type { Route } from '../../http/route.js';
import {
  addHeaders,
  type Call,
  type Entered,
  type HeaderDoc,
  type PlacedStage,
  type StageDocs,
} from '../../http/stages/stage.js';
import { operationKey, type Deprecation } from './deprecations.js';

export const operationSunset = (): ApiError => new ApiError('OPERATION_SUNSET');

/** What a deprecated operation's responses carry: its headers, written once. */
interface Marked {
  readonly deprecation: Deprecation;
  readonly headers: readonly string[];
}

/** The documentation of an operation, as Swagger UI deep-links to it (no tags: "default"). */
const documentationOf = (route: Route): string =>
  `/docs#/default/${route.docs.name.replace(/_(\w)/g, (_, letter: string) => letter.toUpperCase())}`;

function markedOf(route: Route, deprecation: Deprecation): Marked {
  return {
    deprecation,
    headers: [
      'Deprecation',
      `@${Math.floor(deprecation.deprecatedAtMs / 1000)}`,
      'Sunset',
      new Date(deprecation.sunsetAtMs).toUTCString(),
      'Link',
      `<${documentationOf(route)}>; rel="deprecation"; type="text/html"`,
    ],
  };
}

/** The stage for the service's own operations among those deprecated. */
export function lifecycleStage(
  deprecations: readonly Deprecation[],
  routes: readonly Route[],
  now: () => number = Date.now,
): PlacedStage {
  const marked = new Map<Route, Marked>();
  for (const route of routes) {
    const deprecation = deprecations.find(
      (entry) => operationKey(entry.method, entry.path) === operationKey(route.method, route.path),
    );
    if (deprecation !== undefined) marked.set(route, markedOf(route, deprecation));
  }
  return {
    name: 'lifecycle',
    place: 'route',
    enter(call: Call): Entered {
      const found = marked.get(call.matched as Route);
      if (found === undefined) return undefined;
      // A list of the call's own: the response's headers take it as it is.
      addHeaders(call, [...found.headers]);
      if (now() >= found.deprecation.sunsetAtMs) throw operationSunset();
      return undefined;
    },
    docs: lifecycleDocs(marked),
  };
}

const HEADERS: Readonly<Record<string, HeaderDoc>> = {
  Deprecation: {
    description:
      'RFC 9745: this operation is deprecated, since the instant given (seconds since the epoch, after @); it may be in the future.',
    schema: { example: '@1767225600' },
  },
  Sunset: {
    description:
      'RFC 8594: from this instant on, the operation answers 410 (OPERATION_SUNSET) and does nothing else.',
    schema: { example: 'Fri, 01 Jan 2027 00:00:00 GMT' },
  },
  Link: {
    description:
      'The documentation of the deprecated operation (rel="deprecation", RFC 9745), which says what replaces it.',
    schema: { example: '</docs#/default/readTodoV2>; rel="deprecation"; type="text/html"' },
  },
};

function lifecycleDocs(marked: ReadonlyMap<Route, Marked>): StageDocs {
  return {
    headers: HEADERS,
    operation: (route) => (marked.has(route) ? { deprecated: true } : undefined),
    responseHeaders: (route) => (marked.has(route) ? [{ names: Object.keys(HEADERS) }] : []),
    rows: (route) => {
      const found = marked.get(route);
      if (found === undefined) return [];
      const sunset = new Date(found.deprecation.sunsetAtMs).toISOString();
      return [
        {
          key: '410',
          description: `Gone: the operation reached its sunset (${sunset}); nothing ran`,
          error: operationSunset(),
        },
      ];
    },
  };
}
