// A TCP proxy on 127.0.0.1 in front of the test database, so that a test can make the database go
// away and come back without touching the real server.   cut('reset')      — every open connection
// is torn down; new ones are accepted and then ignored,                       as with a host that
// has vanished (the client can only time out).   cut('silent')     — open connections stay up but
// nothing passes any more, as with a network that                       drops packets; new ones are
// ignored too.   cut('black-hole') — as 'silent', but new connections are held rather than ignored:
// restore()                       forwards what they sent, as a healed network delivers a
// retransmitted SYN.   cut('refuse')     — every open connection is torn down and the port stops
// listening, so a new                       connection is refused at once, as with a server that is
// down on a live host.   resetEvery()      — every connection, whatever its state, is reset (RST),
// as a firewall or a                       restarted server does; what is forwarded afterwards is
// up to cut/restore.   resetMidQuery()   — every forwarded connection whose client sent bytes the
// server has not yet                       answered is reset: a query cut in the middle. The others
// go on.   restore()         — new connections are forwarded again; silenced and held ones resume,
// as a                       healed network delivers what was held back (ignored ones stay dead).
import { createConnection, createServer, type Server, type Socket } from 'node:net';

export type CutMode = 'reset' | 'silent' | 'black-hole' | 'refuse';

export interface TcpProxy {
  readonly port: number;
  cut(mode: CutMode): void;
  /** Resets every connection; returns how many there were. */
  resetEvery(): number;
  /** Resets every connection that waits for the server's answer; returns how many. */
  resetMidQuery(): number;
  /** Resolves once new connections are forwarded again. */
  restore(): Promise<void>;
  close(): Promise<void>;
}

interface Pair {
  readonly client: Socket;
  readonly upstream: Socket;
  /** The client sent bytes after the server's last ones: a statement is out, unanswered. */
  awaiting: boolean;
}

export async function startTcpProxy(targetHost: string, targetPort: number): Promise<TcpProxy> {
  let forwarding = true;
  let holding = false;
  const sockets = new Set<Socket>();
  const pairs = new Set<Pair>();
  const silenced = new Set<Pair>();
  /** Accepted during a black hole, not yet forwarded. */
  const held = new Set<Socket>();
  const track = (socket: Socket): void => {
    sockets.add(socket);
    socket.on('error', () => undefined); // a torn-down peer is expected here
    socket.on('close', () => sockets.delete(socket));
  };

  const forward = (client: Socket): void => {
    const upstream = createConnection({ host: targetHost, port: targetPort });
    track(upstream);
    const pair: Pair = { client, upstream, awaiting: false };
    pairs.add(pair);
    client.on('data', () => (pair.awaiting = true));
    upstream.on('data', () => (pair.awaiting = false));
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
  };

  const server: Server = createServer((client) => {
    track(client);
    if (forwarding) return forward(client);
    if (!holding) return; // accepted, never answered
    client.pause();
    held.add(client);
    client.on('close', () => held.delete(client));
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
  /** RST rather than FIN: the peer reads ECONNRESET, as from a server or firewall that forgot it. */
  const reset = (socket: Socket): void => {
    if (!socket.destroyed) socket.resetAndDestroy();
  };

  return {
    port: address.port,
    cut(mode) {
      forwarding = false;
      holding = mode === 'black-hole';
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
    resetEvery() {
      const count = sockets.size;
      for (const socket of sockets) reset(socket);
      return count;
    },
    resetMidQuery() {
      let count = 0;
      for (const pair of pairs) {
        if (!pair.awaiting || silenced.has(pair)) continue;
        count += 1;
        reset(pair.client);
        reset(pair.upstream);
      }
      return count;
    },
    async restore() {
      if (!listening) await relisten();
      forwarding = true;
      holding = false;
      for (const { client, upstream } of silenced) {
        client.pipe(upstream);
        upstream.pipe(client);
        client.resume();
        upstream.resume();
      }
      silenced.clear();
      for (const client of held) if (!client.destroyed) forward(client);
      held.clear();
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      if (listening) await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
