// Assertions on a server's route table, checked once at start-up (TigerBeetle's style: assert what
// the types cannot). Each mistake below would otherwise show only at run time, as a parameter that
// is never filled or a request answered by the wrong route; failing at start names the route.
import type { Route } from './route.js';
import { isPlaceholder, placeholdersOf, templateSegments } from './routing.js';

export class RouteTableError extends Error {
  readonly code = 'ROUTE_TABLE_INVALID';
  constructor(message: string) {
    super(message);
    this.name = 'RouteTableError';
  }
}

export interface RouteTable {
  /** The routes of the service itself. */
  readonly service: readonly Route[];
  /** The routes the server adds beside them: docs and health checks. */
  readonly builtIn: readonly Route[];
}

/** Throws a RouteTableError for the first problem found. */
export function assertRouteTable(table: RouteTable): void {
  const all = [...table.builtIn, ...table.service];
  for (const route of all) assertParamsMatchPath(route);
  for (const builtIn of table.builtIn) {
    const shadowed = table.service.find((route) => overlaps(builtIn, route));
    if (shadowed !== undefined) {
      throw new RouteTableError(
        `the built-in route ${describe(builtIn)} overlaps the service route ${describe(shadowed)}: one would answer requests meant for the other`,
      );
    }
  }
  assertNoDuplicates(all);
}

/** Every {placeholder} of the path has a parameter spec, and every spec a placeholder. */
function assertParamsMatchPath(route: Route): void {
  const placeholders = placeholdersOf(route.path);
  const specs = route.params.map(([name]) => name);
  if (new Set(placeholders).size !== placeholders.length) {
    throw new RouteTableError(`route ${describe(route)} names a path placeholder twice`);
  }
  const unspecified = placeholders.find((name) => !specs.includes(name));
  if (unspecified !== undefined) {
    throw new RouteTableError(
      `route ${describe(route)} has no parameter spec for its placeholder {${unspecified}}`,
    );
  }
  const unplaced = specs.find((name) => !placeholders.includes(name));
  if (unplaced !== undefined) {
    throw new RouteTableError(
      `route ${describe(route)} has a parameter spec "${unplaced}" that its path does not contain`,
    );
  }
}

/** Two routes with one method and one path shape (placeholder names aside): the second would never run. */
function assertNoDuplicates(routes: readonly Route[]): void {
  const seen = new Map<string, Route>();
  for (const route of routes) {
    const shape = `${route.method} ${templateSegments(route.path)
      .map((s) => (isPlaceholder(s) ? '{}' : s))
      .join('/')}`;
    const earlier = seen.get(shape);
    if (earlier !== undefined)
      throw new RouteTableError(
        `routes ${describe(earlier)} and ${describe(route)} share a method and path`,
      );
    seen.set(shape, route);
  }
}

/** Some request reaches both: same method, and each segment equal or a placeholder on either side. */
function overlaps(a: Route, b: Route): boolean {
  if (a.method !== b.method) return false;
  const left = templateSegments(a.path);
  const right = templateSegments(b.path);
  if (left.length !== right.length) return false;
  return left.every((segment, i) => {
    const other = right[i] as string;
    return (
      segment === other ||
      (isPlaceholder(segment) && other !== '') ||
      (isPlaceholder(other) && segment !== '')
    );
  });
}

const describe = (route: Route): string => `${route.method} ${route.path}`;
