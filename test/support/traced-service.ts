// A service traced for a test (test/features/tracing*.test.ts): started as a process with tracing
// on, exporting quickly to a real OTLP receiver (otlp-receiver.ts), and the spans of its requests
// found by their request id.
import { startReceiver, type ReceivedSpan, type Receiver } from './otlp-receiver.js';
import { startServiceProcess, type ServiceProcess } from './service-process.js';

/** Exports every 50 ms, so that a test waits for its spans briefly. */
export const QUICK_EXPORT = { OTEL_BSP_SCHEDULE_DELAY: '50' };

export async function withTraced(
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  body: (url: string, receiver: Receiver, service: ServiceProcess) => Promise<void>,
  receiver?: Receiver,
): Promise<void> {
  const collector = receiver ?? (await startReceiver());
  const service = await startServiceProcess(
    ['--otel-endpoint', collector.url, '--db', 'memory', ...args],
    1,
    { env: { ...QUICK_EXPORT, ...env } },
  );
  try {
    await body(service.urls[0] as string, collector, service);
  } finally {
    await service.kill();
    await collector.close();
  }
}

export const serverSpans = (spans: readonly ReceivedSpan[]): ReceivedSpan[] =>
  spans.filter((span) => span.kind === 2);
export const spanFor = (
  spans: readonly ReceivedSpan[],
  requestId: string,
): ReceivedSpan | undefined =>
  serverSpans(spans).find(
    (span) =>
      (span.attributes['http.response.header.x-request-id'] as string[] | undefined)?.[0] ===
      requestId,
  );

export async function get(
  url: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; requestId: string }> {
  const response = await fetch(url, { headers });
  await response.arrayBuffer();
  return { status: response.status, requestId: response.headers.get('x-request-id') ?? '' };
}

export async function spanOf(receiver: Receiver, requestId: string): Promise<ReceivedSpan> {
  await receiver.waitFor((spans) => spanFor(spans, requestId) !== undefined);
  return spanFor(receiver.spans, requestId) as ReceivedSpan;
}

/** The process's JSON log lines, parsed. */
export function logLines(service: ServiceProcess): Record<string, unknown>[] {
  return service
    .output()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

/** The to-do service's count of spans dropped for one reason, read from /metrics (-1: no such line). */
export async function dropped(url: string, reason: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const match = new RegExp(
    `^otel_spans_dropped_total\\{service="todo",reason="${reason}"\\} (\\d+)`,
    'm',
  ).exec(text);
  return match === null ? -1 : Number(match[1]);
}
