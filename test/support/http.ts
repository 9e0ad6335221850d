// A raw HTTP client for tests: the request-target is sent exactly as written (no normalising),
// and the response comes back as status, lower-cased headers and bytes.
import { request } from 'node:http';

export interface RawRequest {
  readonly method: string;
  readonly path: string;
  readonly headers?: readonly (readonly [string, string])[];
  readonly body?: string | Buffer;
  /** Sends the body in two chunks without a Content-Length (Transfer-Encoding: chunked). */
  readonly chunked?: boolean;
  /** The address the connection comes from (any of 127.0.0.0/8 on loopback): another client, to the server. */
  readonly localAddress?: string;
}

export interface RawResponse {
  readonly status: number;
  readonly reason: string;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly body: Buffer;
  readonly text: string;
}

export function send(baseUrl: string, req: RawRequest): Promise<RawResponse> {
  const url = new URL(baseUrl);
  const headers: Record<string, string | string[]> = { Host: url.host };
  // A name given twice is sent as two field lines.
  for (const [name, value] of req.headers ?? []) {
    const earlier = headers[name];
    headers[name] = earlier === undefined ? value : [earlier, value].flat();
  }
  const body =
    req.body === undefined
      ? undefined
      : Buffer.isBuffer(req.body)
        ? req.body
        : Buffer.from(req.body, 'utf8');
  if (
    body !== undefined &&
    req.chunked !== true &&
    !Object.keys(headers).some((h) => h.toLowerCase() === 'content-length')
  ) {
    headers['Content-Length'] = String(body.length);
  }
  return new Promise((resolve, reject) => {
    const outgoing = request(
      {
        host: url.hostname,
        port: url.port,
        method: req.method,
        path: req.path,
        headers,
        setHost: false,
        agent: false,
        localAddress: req.localAddress,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const bytes = Buffer.concat(chunks);
          resolve({
            status: res.statusCode ?? 0,
            reason: res.statusMessage ?? '',
            headers: res.headers,
            body: bytes,
            text: bytes.toString('utf8'),
          });
        });
        res.on('error', reject);
      },
    );
    outgoing.setTimeout(15_000, () => outgoing.destroy(new Error('request timed out')));
    outgoing.on('error', reject);
    if (body !== undefined && body.length > 0) {
      const half = req.chunked === true ? body.length >> 1 : body.length;
      outgoing.write(body.subarray(0, half));
      if (half < body.length) outgoing.write(body.subarray(half));
    }
    outgoing.end();
  });
}

/** Shorthands for the common calls. */
export const get = (baseUrl: string, path: string): Promise<RawResponse> =>
  send(baseUrl, { method: 'GET', path });
export const postJson = (
  baseUrl: string,
  path: string,
  body: string,
  method = 'POST',
): Promise<RawResponse> =>
  send(baseUrl, { method, path, headers: [['Content-Type', 'application/json']], body });
export const json = (res: RawResponse): unknown => JSON.parse(res.text);

/** The named headers of a response (lower-case names), for a full comparison of the ones a promise is about. */
export function pick(
  headers: RawResponse['headers'],
  names: readonly string[],
): Record<string, string | string[] | undefined> {
  return Object.fromEntries(names.map((name) => [name, headers[name]]));
}
