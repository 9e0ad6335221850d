// A TCP proxy on 127.0.0.1 in front of the test database, so that a test can make the database go
// away and come back without touching the real server.
//   cut('reset')  — every open connection is torn down; new ones are accepted and then ignored,
//                   as with a host that has vanished (the client can only time out).
//   cut('silent') — open connections stay up but nothing passes any more, as with a network that
//                   drops packets; new ones are ignored too.
//   restore()     — new connections are forwarded again; silenced ones resume, as a healed
//                   network delivers what was held back (ignored ones stay dead).
import { createConnection, createServer, type Server, type Socket } from 'node:net';

export type CutMode = 'reset' | 'silent';

export interface TcpProxy {
  readonly port: number;
  cut(mode: CutMode): void;
  restore(): void;
  close(): Promise<void>;
}

export async function startTcpProxy(targetHost: string, targetPort: number): Promise<TcpProxy> {
  let forwarding = true;
  const sockets = new Set<Socket>();
  const pairs = new Set<{ client: Socket; upstream: Socket }>();
  const silenced = new Set<{ client: Socket; upstream: Socket }>();
  const track = (socket: Socket): void => {
    sockets.add(socket);
    socket.on('error', () => undefined); // a torn-down peer is expected here
    socket.on('close', () => sockets.delete(socket));
  };

  const server: Server = createServer((client) => {
    track(client);
    if (!forwarding) return; // accepted, never answered
    const upstream = createConnection({ host: targetHost, port: targetPort });
    track(upstream);
    const pair = { client, upstream };
    pairs.add(pair);
    client.pipe(upstream);
    upstream.pipe(client);
    const end = (): void => {
      pairs.delete(pair);
      silenced.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on('close', end);
    upstream.on('close', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('proxy has no port');

  return {
    port: address.port,
    cut(mode) {
      forwarding = false;
      for (const pair of pairs) {
        const { client, upstream } = pair;
        if (mode === 'reset') {
          client.destroy();
          upstream.destroy();
        } else {
          client.unpipe(upstream);
          upstream.unpipe(client);
          client.pause();
          upstream.pause();
          silenced.add(pair);
        }
      }
    },
    restore() {
      forwarding = true;
      for (const { client, upstream } of silenced) {
        client.pipe(upstream);
        upstream.pipe(client);
        client.resume();
        upstream.resume();
      }
      silenced.clear();
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
