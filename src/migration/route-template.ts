// The route a request belongs to, learned from its URL alone: the kit knows nothing of the
// service's routes, so a path segment that looks like an identifier stands for any: digits
// (signed or not), a UUID, or 16 or more hexadecimal digits become `{id}`; the query is left out;
// the method leads. `GET /todos/7?x=1` and `GET /todos/12` are both `GET /todos/{id}`, while
// `GET /todos/abc` is a route of its own. Noise is learned, and requests counted, per route.

const ID_SEGMENT =
  /^(?:[+-]?\d+|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|[0-9a-f]{16,})$/i;

/** The path of a request-target with its identifier segments as `{id}`. */
export function pathTemplate(target: string): string {
  const path = target.split('?', 1)[0] ?? '';
  return path
    .split('/')
    .map((segment) => (ID_SEGMENT.test(segment) ? '{id}' : segment))
    .join('/');
}

/** `METHOD /path/{id}`: the route of a request, as the report groups requests. */
export function routeOf(method: string, target: string): string {
  return `${method.toUpperCase()} ${pathTemplate(target)}`;
}
