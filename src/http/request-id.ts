// Request ids. An incoming X-Request-Id is kept when it is safe to log and to send back (1 to 128
// characters from [A-Za-z0-9._:-]), so that a proxy's or a client's id follows the request through
// our logs; anything else is replaced, never echoed, by a random UUID, unique across processes and
// services (two services of one process never share an id; see random-uuids.ts).
import { randomUuid } from './random-uuids.js';

export const REQUEST_ID_HEADER = 'X-Request-Id';
export const REQUEST_ID_LENGTH_MAX = 128;

export function requestIdFor(incoming: string | string[] | undefined): string {
  return typeof incoming === 'string' && isAcceptableRequestId(incoming) ? incoming : randomUuid();
}

export function isAcceptableRequestId(text: string): boolean {
  if (text.length === 0 || text.length > REQUEST_ID_LENGTH_MAX) return false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    const allowed =
      (c >= 97 && c <= 122) || // a-z
      (c >= 65 && c <= 90) || // A-Z
      (c >= 48 && c <= 58) || // 0-9 and ':'
      c === 45 || // -
      c === 46 || // .
      c === 95; // _
    if (!allowed) return false;
  }
  return true;
}
