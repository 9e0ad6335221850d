// A TCP proxy on 127.0.0.1 in front of the test database, so that a test can make the database go
// away and come back without touching the real server.
//   cut('reset')  — every open connection is torn down; new ones are accepted and then ignored,
//                   as with a host that has vanished (the client can only time out).
//   cut('silent') — open connections stay up but nothing passes any more, as with a network that
//                   drops packets; new ones are ignored too.
//   cut('refuse') — every open connection is torn down and the port stops listening, so a new
//                   connection is refused at once, as with a server that is down on a live host.
//   restore()     — new connections are forwarded again; silenced ones resume, as a healed
//                   network delivers what was held back (ignored ones stay dead).
import { createConnection, createServer, type Server, type Socket } from 'node:net';

export type CutMode = 'reset' | 'silent' | 'refuse';

export interface TcpProxy {
  readonly port: number;
  cut(mode: CutMode): void;
  /** Resolves once new connections are forwarded again. */
  restore(): Promise<void>;
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
  let listening = true;
  /** Listening again on the same port after a refusal; the port was ours a moment ago. */
  const relisten = (): Promise<void> =>
    new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(address.port, '127.0.0.1', () => {
        server.off('error', reject);
        listening = true;
        resolve();
      });
    });

  return {
    port: address.port,
    cut(mode) {
      forwarding = false;
      for (const pair of pairs) {
        const { client, upstream } = pair;
        if (mode === 'reset' || mode === 'refuse') {
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
      if (mode === 'refuse' && listening) {
        listening = false;
        server.close();
        for (const socket of sockets) socket.destroy();
      }
    },
    async restore() {
      if (!listening) await relisten();
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
      if (listening) await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
