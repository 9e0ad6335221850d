// Before any load: one request to the service and one to its baseline must give the same status
// and the same body, or the comparison would be between different work.
import { request } from 'node:http';
import { FRESH_KEY, freshKey, type BenchRequest } from './load.js';

export interface Received {
  readonly status: number;
  readonly body: string;
}

/** `timeoutMs`: under valgrind, a server's first answer to a request can take many seconds. */
export function sendOnce(baseUrl: string, req: BenchRequest, timeoutMs = 5000): Promise<Received> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { ...req.headers };
    if (req.contentType !== undefined) headers['content-type'] = req.contentType;
    if (req.idempotencyKey !== undefined)
      headers['idempotency-key'] =
        req.idempotencyKey === FRESH_KEY ? freshKey() : req.idempotencyKey;
    const outgoing = request(
      baseUrl + req.path,
      { method: req.method, headers, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }),
        );
        res.on('error', reject);
      },
    );
    outgoing.setTimeout(timeoutMs, () =>
      outgoing.destroy(new Error(`no answer within ${timeoutMs / 1000} s`)),
    );
    outgoing.on('error', reject);
    outgoing.end(req.body);
  });
}

/** Undefined when the answers agree; otherwise what differs, in one line. */
export function responsesDiffer(
  service: Received,
  baseline: Received,
  expectedStatus: number,
  bodyCheck: 'exact' | 'digits-aside',
): string | undefined {
  if (service.status !== expectedStatus)
    return `service answered ${service.status}, expected ${expectedStatus}`;
  if (baseline.status !== expectedStatus)
    return `baseline answered ${baseline.status}, expected ${expectedStatus}`;
  const normal = (body: string): string =>
    bodyCheck === 'exact' ? body : body.replace(/\d+/g, '#');
  if (normal(service.body) !== normal(baseline.body)) {
    return `bodies differ: service ${service.body.slice(0, 120)} / baseline ${baseline.body.slice(0, 120)}`;
  }
  return undefined;
}
