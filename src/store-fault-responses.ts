// How the services answer a store's fault (src/db/store-errors.ts). Storage knows nothing of HTTP
// and the contract layer nothing of storage; this is where the two meet.
//
// Every passing fault — unreachable, busy, saturated — and every fault that stops writes only —
// disk full, read-only — is a 503 with Retry-After: the request was fine, the client may send it
// again, and nothing of it was written. 507 Insufficient Storage would name a full disk more
// precisely, but it is WebDAV's, and clients and proxies treat an unknown 5xx as final, so 503 it
// is. A corrupt database is not passing: it is left as an internal failure, the 500 of the active
// format.
import { serviceUnavailable } from './http/errors.js';
import { StoreError } from './db/store-errors.js';

export function errorForStoreFault(error: unknown): unknown {
  if (error instanceof StoreError && error.fault !== 'corrupt') return serviceUnavailable();
  return error;
}
