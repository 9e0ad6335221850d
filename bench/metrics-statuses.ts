// The statuses a service answered, as its own /metrics counts them (http_requests_total by route
// and status). wrk tells only whether an answer was 2xx or 3xx; the difference between two readings
// of these counters tells exactly which statuses the service gave in between, so that a 500 or a
// 503 cannot pass for the 404 or 422 a scenario expects.
import { sendOnce } from './answers.js';

const METRICS_ROUTE = '/metrics';

/** Requests answered so far by status, the scrapes of /metrics left out. */
export function requestCounts(exposition: string): Map<number, number> {
  const counts = new Map<number, number>();
  // Greedy to the line's last "} ": a route template's label holds braces of its own ("/todos/{id}").
  for (const match of exposition.matchAll(/^http_requests_total\{(.*)\} (\d+)$/gm)) {
    const labels = match[1] as string;
    if (/(^|,)route="\/metrics"/.test(labels)) continue;
    const status = /(^|,)status="(\d+)"/.exec(labels)?.[2];
    if (status === undefined) throw new Error(`a request counter without a status: ${labels}`);
    counts.set(Number(status), (counts.get(Number(status)) ?? 0) + Number(match[2]));
  }
  return counts;
}

/** What changed between two readings: status → requests answered in between. */
export function countsBetween(before: ReadonlyMap<number, number>, after: ReadonlyMap<number, number>): Map<number, number> {
  const between = new Map<number, number>();
  for (const [status, n] of after) {
    const delta = n - (before.get(status) ?? 0);
    if (delta !== 0) between.set(status, delta);
  }
  return between;
}

export async function readRequestCounts(baseUrl: string): Promise<Map<number, number>> {
  const answer = await sendOnce(baseUrl, { method: 'GET', path: METRICS_ROUTE });
  if (answer.status !== 200) throw new Error(`${baseUrl}${METRICS_ROUTE} answered ${answer.status}`);
  return requestCounts(answer.body);
}
