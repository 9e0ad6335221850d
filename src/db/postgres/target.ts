// The PostgreSQL database a store works on, as a tracer names it (store-observer.ts): the database
// and the server the connection URL names, read from the URL alone (no query is made for it).
// Never the password: spans go to a collector that should see no credential. The user's name
// appears only as what PostgreSQL makes of it, the database a URL without one opens.
import type { DatabaseTarget } from '../store-observer.js';

const DEFAULT_PORT = 5432;

/** The URL's database (else its user's name, as PostgreSQL defaults it), host (or `host` parameter, a socket folder) and port. */
export function postgresTarget(url: string): DatabaseTarget {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { system: 'postgresql', namespace: undefined, server: undefined };
  }
  const decoded = (text: string): string => {
    try {
      return decodeURIComponent(text);
    } catch {
      return text;
    }
  };
  const database = decoded(parsed.pathname.slice(1)) || decoded(parsed.username);
  const address =
    parsed.searchParams.get('host') ??
    (decoded(parsed.hostname).replace(/^\[(.*)\]$/, '$1') || 'localhost');
  const port = Number(parsed.searchParams.get('port') ?? parsed.port) || DEFAULT_PORT;
  return {
    system: 'postgresql',
    namespace: database === '' ? undefined : database,
    server: { address, port },
  };
}
