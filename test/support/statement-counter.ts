// A TCP proxy in front of the test database that counts the statements its clients send: each
// Sync (the end of an extended-protocol statement, as node-postgres sends every query with values)
// and each simple Query, read from the frontend's message stream (PostgreSQL's protocol: after the
// startup packet, a type byte and a 4-byte length that counts itself). So that a test can say how
// many round trips some work cost, not only what it answered.
import { createConnection, createServer, type Socket } from 'node:net';

export interface StatementCounter {
  readonly port: number;
  /** Statements sent through the proxy since it started. */
  readonly statements: number;
  close(): Promise<void>;
}

const SYNC = 0x53; // 'S'
const QUERY = 0x51; // 'Q'

export async function startStatementCounter(
  targetHost: string,
  targetPort: number,
): Promise<StatementCounter> {
  let statements = 0;
  const sockets = new Set<Socket>();
  const track = (socket: Socket): void => {
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.on('close', () => sockets.delete(socket));
  };
  const server = createServer((client) => {
    track(client);
    const upstream = createConnection({ host: targetHost, port: targetPort });
    track(upstream);
    let pending = Buffer.alloc(0);
    let started = false;
    client.on('data', (chunk: Buffer) => {
      upstream.write(chunk);
      pending = Buffer.concat([pending, chunk]);
      for (;;) {
        // The startup packet has no type byte: its length comes first.
        const header = started ? 5 : 4;
        if (pending.length < header) break;
        const length = started ? pending.readInt32BE(1) + 1 : pending.readInt32BE(0);
        if (pending.length < length) break;
        if (started && (pending[0] === SYNC || pending[0] === QUERY)) statements += 1;
        started = true;
        pending = pending.subarray(length);
      }
    });
    upstream.pipe(client);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return {
    port: address.port,
    get statements() {
      return statements;
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
