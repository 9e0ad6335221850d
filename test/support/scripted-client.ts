// A client that sends on a fixed schedule whatever the answers (an open loop), as a script at
// several times its rate does: one request every `periodMs` for `durationMs`, round-robin over the
// URLs given, on kept-alive connections. It records each request's status, when it was sent and
// when its answer came, on the monotonic clock.
import { Agent, request } from 'node:http';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';

export interface ScriptedAnswer {
  readonly status: number;
  readonly sentMs: number;
  readonly answeredMs: number;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
}

export async function sendOnSchedule(
  urls: readonly string[],
  path: string,
  periodMs: number,
  durationMs: number,
): Promise<ScriptedAnswer[]> {
  const agent = new Agent({ keepAlive: true, maxSockets: 64 });
  const pending: Promise<ScriptedAnswer>[] = [];
  const startedMs = performance.now();
  try {
    for (let i = 0; ; i++) {
      const dueMs = startedMs + i * periodMs;
      if (dueMs - startedMs > durationMs) break;
      const waitMs = dueMs - performance.now();
      if (waitMs > 0) await sleep(waitMs);
      pending.push(once(agent, urls[i % urls.length] as string, path));
    }
    return await Promise.all(pending);
  } finally {
    agent.destroy();
  }
}

function once(agent: Agent, baseUrl: string, path: string): Promise<ScriptedAnswer> {
  const url = new URL(path, baseUrl);
  return new Promise((resolve, reject) => {
    const sentMs = performance.now();
    const outgoing = request(url, { agent }, (res) => {
      res.resume();
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          sentMs,
          answeredMs: performance.now(),
          headers: res.headers,
        }),
      );
      res.on('error', reject);
    });
    outgoing.setTimeout(15_000, () => outgoing.destroy(new Error('request timed out')));
    outgoing.on('error', reject);
    outgoing.end();
  });
}
