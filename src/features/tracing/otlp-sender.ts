// Exports leave from a thread of their own (otlp-sender-worker.ts): the service's thread encodes a
// batch and hands its bytes over, one message per batch; the other thread posts them and says what
// the collector answered. A thread that fails fails the exports out (they are counted as failed)
// and the next export starts a new one: a broken exporter never stops the service.
import { Worker } from 'node:worker_threads';
import type { ExportAnswer, OtlpSender, OtlpTarget } from './otlp-http.js';
import type { SendRequest } from './otlp-sender-worker.js';

const SCRIPT = new URL('./otlp-sender-worker.js', import.meta.url);

export function threadedSender(target: OtlpTarget): OtlpSender {
  let worker: Worker | undefined;
  let nextId = 0;
  const waiting = new Map<number, (answer: ExportAnswer) => void>();

  const failAll = (reason: string): void => {
    for (const settle of waiting.values()) settle({ kind: 'failed', reason });
    waiting.clear();
    worker = undefined;
  };
  const start = (): Worker => {
    const started = new Worker(SCRIPT, { workerData: target });
    started.on('message', ({ id, answer }: { id: number; answer: ExportAnswer }) => {
      waiting.get(id)?.(answer);
      waiting.delete(id);
      // Idle, the thread must not keep the process alive.
      if (waiting.size === 0) started.unref();
    });
    started.on('error', (error) => failAll(`the exporting thread failed: ${error.message}`));
    started.on('exit', (code) => {
      if (worker === started) failAll(`the exporting thread stopped (exit code ${code})`);
    });
    started.unref();
    return started;
  };

  return {
    send(body) {
      const thread = (worker ??= start());
      const id = nextId++;
      return new Promise<ExportAnswer>((resolve) => {
        waiting.set(id, resolve);
        thread.ref();
        thread.postMessage({ id, body } satisfies SendRequest);
      });
    },
    close() {
      const thread = worker;
      worker = undefined;
      failAll('the exporter is closed');
      void thread?.terminate();
    },
  };
}
