// One bounded load run with autocannon against one server, on loopback, for a time or a number of
// requests. Latencies and statuses are taken from every response (autocannon's own histogram keeps
// whole milliseconds only, and only for 2xx answers), so that percentiles are exact and any
// unexpected status is counted.
import { performance } from 'node:perf_hooks';
import autocannon from 'autocannon';

export interface BenchRequest {
  readonly method: 'GET' | 'POST' | 'PUT';
  readonly path: string;
  readonly body?: string;
  readonly contentType?: string;
  /** An Idempotency-Key on every request: `fresh` for a new one each time, else this one key. */
  readonly idempotencyKey?: string;
  /** Other headers sent with every request (If-Match). */
  readonly headers?: Readonly<Record<string, string>>;
}

export const FRESH_KEY = 'fresh';
let freshKeys = 0;
/** A key no earlier request of this or another run has used. */
export const freshKey = (): string => `bench-${process.pid}-${Date.now()}-${++freshKeys}`;

/** A run lasts duration_s seconds, or until `amount` requests were answered. */
export type LoadRun = {
  readonly connections: number;
  readonly expectedStatus: number;
  /** How long one answer may take before autocannon gives up on it (10 s unless said). */
  readonly timeout_s?: number;
} & ({ readonly duration_s: number } | { readonly amount: number });

export interface Measurement {
  readonly responses: number;
  readonly requestsPerSec: number;
  /** Response latencies in ms, sorted ascending. */
  readonly latencies_ms: Float64Array;
  readonly statusCounts: Readonly<Record<string, number>>;
  /** Responses whose status was not the expected one. */
  readonly wrongStatus: number;
  /** Connection errors and time-outs. */
  readonly errors: number;
}

export async function drive(
  baseUrl: string,
  req: BenchRequest,
  run: LoadRun,
): Promise<Measurement> {
  let latencies = new Float64Array(1 << 16);
  let responses = 0;
  const statusCounts: Record<string, number> = {};
  const headers: Record<string, string> = { ...req.headers };
  if (req.contentType !== undefined) headers['content-type'] = req.contentType;
  if (req.idempotencyKey !== undefined && req.idempotencyKey !== FRESH_KEY)
    headers['idempotency-key'] = req.idempotencyKey;
  // autocannon rebuilds a request only through setupRequest: a new key each time costs that call.
  const requests =
    req.idempotencyKey === FRESH_KEY
      ? {
          requests: [
            {
              setupRequest: (r: autocannon.Request) => ({
                ...r,
                headers: { ...r.headers, 'idempotency-key': freshKey() },
              }),
            },
          ],
        }
      : {};
  let finished!: (result: autocannon.Result) => void;
  let failed!: (error: Error) => void;
  const done = new Promise<autocannon.Result>((resolve, reject) => {
    finished = resolve;
    failed = reject;
  });
  // autocannon ends a run of `amount` requests at its next one-second tick, and counts that wait in
  // its duration: a run of 10.2 s took 11 by its clock. The rate of such a run is taken from the
  // last response instead.
  const startedMs = performance.now();
  let lastResponseMs = startedMs;
  const instance = autocannon(
    {
      url: baseUrl + req.path,
      method: req.method,
      ...(req.body === undefined ? {} : { body: req.body }),
      headers,
      ...requests,
      connections: run.connections,
      ...('amount' in run ? { amount: run.amount } : { duration: run.duration_s }),
      timeout: run.timeout_s ?? 10,
    },
    (error: Error | null, result: autocannon.Result) =>
      error === null ? finished(result) : failed(error),
  );
  instance.on(
    'response',
    (_client: unknown, statusCode: number, _bytes: number, responseTime_ms: number) => {
      if (responses === latencies.length) {
        const grown = new Float64Array(latencies.length * 2);
        grown.set(latencies);
        latencies = grown;
      }
      latencies[responses++] = responseTime_ms;
      lastResponseMs = performance.now();
      statusCounts[statusCode] = (statusCounts[statusCode] ?? 0) + 1;
    },
  );
  const result = await done;
  return {
    responses,
    requestsPerSec:
      'amount' in run
        ? responses / ((lastResponseMs - startedMs) / 1000)
        : responses / result.duration,
    latencies_ms: latencies.slice(0, responses).sort(),
    statusCounts,
    wrongStatus: responses - (statusCounts[run.expectedStatus] ?? 0),
    errors: result.errors + result.timeouts,
  };
}
