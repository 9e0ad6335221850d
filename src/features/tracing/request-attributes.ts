// A SERVER span's attributes, by the stable HTTP semantic conventions: built only for a request
// that is sampled (tracing.ts decides first). The method is named as it is when it is known
// (OTEL_INSTRUMENTATION_HTTP_KNOWN_METHODS), else _OTHER beside http.request.method_original; the
// query is recorded with the values of the conventions' sensitive keys replaced by REDACTED.
import type { Attributes } from '@opentelemetry/api';
import {
  ATTR_CLIENT_ADDRESS,
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_REQUEST_METHOD_ORIGINAL,
  ATTR_HTTP_RESPONSE_HEADER,
  ATTR_NETWORK_PROTOCOL_VERSION,
  ATTR_SERVER_ADDRESS,
  ATTR_SERVER_PORT,
  ATTR_URL_PATH,
  ATTR_URL_QUERY,
  ATTR_URL_SCHEME,
  ATTR_USER_AGENT_ORIGINAL,
} from '@opentelemetry/semantic-conventions';
import type { IncomingHttpHeaders } from 'node:http';
import type { Socket } from 'node:net';

/** Every response carries the request's id in X-Request-Id (src/http/request-id.ts): its attribute, by the conventions' name for a response header. */
const REQUEST_ID_ATTRIBUTE = ATTR_HTTP_RESPONSE_HEADER('x-request-id');
const REDACTED = 'REDACTED';

export function requestAttributes(
  method: string,
  known: boolean,
  target: string,
  headers: IncomingHttpHeaders,
  socket: Socket,
  httpVersion: string,
  requestId: string,
): Attributes {
  const queryAt = target.indexOf('?');
  const attributes: Attributes = {
    [ATTR_HTTP_REQUEST_METHOD]: known ? method : '_OTHER',
    [ATTR_URL_PATH]: queryAt === -1 ? target : target.slice(0, queryAt),
  };
  if (queryAt !== -1) attributes[ATTR_URL_QUERY] = redactedQuery(target.slice(queryAt + 1));
  attributes[ATTR_URL_SCHEME] = 'http';
  attributes[ATTR_NETWORK_PROTOCOL_VERSION] = httpVersion;
  attributes[REQUEST_ID_ATTRIBUTE] = [requestId];
  if (!known) attributes[ATTR_HTTP_REQUEST_METHOD_ORIGINAL] = method;
  const client = socket.remoteAddress;
  if (client !== undefined) attributes[ATTR_CLIENT_ADDRESS] = client;
  const agent = headers['user-agent'];
  if (agent !== undefined) attributes[ATTR_USER_AGENT_ORIGINAL] = agent;
  // The server as the client named it (Host), else the address the connection came in on.
  const server = serverOf(headers.host);
  if (server !== undefined) {
    attributes[ATTR_SERVER_ADDRESS] = server.address;
    attributes[ATTR_SERVER_PORT] = server.port;
  } else {
    if (socket.localAddress !== undefined) attributes[ATTR_SERVER_ADDRESS] = socket.localAddress;
    if (socket.localPort !== undefined) attributes[ATTR_SERVER_PORT] = socket.localPort;
  }
  return attributes;
}

/**
 * The query with every value replaced by REDACTED, its keys kept (`q=REDACTED&sig=REDACTED`; a
 * parameter without `=` is REDACTED whole). The conventions require redacting the signed-URL keys
 * they list and let an instrumentation scrub more; no route of these services reads a query, so
 * none of its values is worth the risk of an `access_token` sent to the collector in clear.
 */
export function redactedQuery(query: string): string {
  if (query === '') return query;
  return query
    .split('&')
    .map((parameter) => {
      const eq = parameter.indexOf('=');
      return eq === -1 ? REDACTED : `${parameter.slice(0, eq)}=${REDACTED}`;
    })
    .join('&');
}

/** The last Host seen, parsed: clients name the same one request after request. */
let lastHost: string | undefined;
let lastServer: { readonly address: string; readonly port: number } | undefined;

/** `host[:port]` (an IPv6 host in brackets); undefined for none or a malformed one. Port 80 when none is said: the scheme is http. */
function serverOf(
  host: string | undefined,
): { readonly address: string; readonly port: number } | undefined {
  if (host === undefined) return undefined;
  if (host === lastHost) return lastServer;
  const match = /^(\[[^\]]*\]|[^:[\]]+)(?::(\d{1,5}))?$/.exec(host);
  lastHost = host;
  lastServer =
    match === null
      ? undefined
      : {
          address: (match[1] as string).replace(/^\[(.*)\]$/, '$1'),
          port: match[2] === undefined ? 80 : Number(match[2]),
        };
  return lastServer;
}
