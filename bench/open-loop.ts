// A load generator that keeps its schedule: request i is due at i ÷ rate seconds from the start and
// goes out then on an idle connection, or on a new one when every connection is busy, whether or
// not the earlier requests were answered (open loop). Its latency is counted from that due time,
// not from when it went out (no coordinated omission): a request that had to wait for a connection,
// because the cap was reached or the generator fell behind, counts its wait. autocannon's
// overallRate and wrk are closed loops: a fixed set of connections each waits for its answer before
// sending again, so a slow server slows the load down and the backlog never grows past them.
//
// One request in flight per connection (no pipelining); the answers are read just far enough to
// know their status and where they end: the services send a Content-Length with every answer.
import { connect, type Socket } from 'node:net';

export interface Schedule {
  readonly port: number;
  /** The request's bytes, sent as they are, over and over. */
  readonly request: Buffer;
  /** Requests a second; 0: closed loop, each of `connectionsMax` connections sends again on its answer. */
  readonly rate: number;
  readonly seconds: number;
  /** Connections open at most; past them, due requests wait in line here. */
  readonly connectionsMax: number;
  /** Connections opened before the first request is due, as clients that were already there. */
  readonly connectionsAtStart: number;
  /** Answers to requests due before this many seconds are not counted (warm-up). */
  readonly warmUpSeconds: number;
}

export interface Answers {
  /** Latencies in ms from each request's due time to its answer's end, by status. */
  readonly latencies: ReadonlyMap<number, number[]>;
  /** Requests without an answer: the connection failed or closed, or the run ended first. */
  readonly unanswered: number;
  /** Seconds over which the counted requests were due. */
  readonly countedSeconds: number;
  /** The most connections open at once. */
  readonly connectionsPeak: number;
  /** How late this generator sent due requests at worst (ms): past a few ms, it was the bottleneck. */
  readonly generatorLagMax_ms: number;
}

/** How often the schedule is looked at; due requests are sent in a burst at each look. */
const TICK_MS = 1;
/** After the last request is due, how long its answer may take before it counts as unanswered. */
const DRAIN_MS = 5_000;
const HEAD_END = Buffer.from('\r\n\r\n');

interface Connection {
  readonly socket: Socket;
  /** Due time (performance.now()) of the request in flight; undefined: idle. */
  due: number | undefined;
  pending: Buffer;
}

export function requestBytes(method: string, path: string, body: string): Buffer {
  const length = Buffer.byteLength(body);
  return Buffer.from(
    `${method} ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n\r\n${body}`,
  );
}

export async function offer(schedule: Schedule): Promise<Answers> {
  const { port, request, rate, seconds, connectionsMax } = schedule;
  const ready = await Promise.all(
    Array.from({ length: Math.min(schedule.connectionsAtStart, connectionsMax) }, () =>
      connected(port),
    ),
  );
  const start = performance.now();
  const countedFrom = start + schedule.warmUpSeconds * 1000;
  const end = start + seconds * 1000;
  const latencies = new Map<number, number[]>();
  const all = new Set<Connection>();
  const idle: Connection[] = [];
  /** Due times of requests waiting for a connection, oldest first. */
  const waiting: number[] = [];
  let waitingHead = 0;
  let open = 0;
  let connectionsPeak = 0;
  let sent = 0;
  let unanswered = 0;
  let finished = false;
  let generatorLagMax_ms = 0;

  const record = (due: number, status: number): void => {
    if (due < countedFrom) return;
    let list = latencies.get(status);
    if (list === undefined) latencies.set(status, (list = []));
    list.push(performance.now() - due);
  };

  const send = (connection: Connection, due: number): void => {
    connection.due = due;
    connection.socket.write(request);
  };

  const nextWaiting = (): number | undefined => {
    if (waitingHead === waiting.length) return undefined;
    const due = waiting[waitingHead++] as number;
    if (waitingHead > 4096 && waitingHead * 2 > waiting.length) {
      waiting.splice(0, waitingHead);
      waitingHead = 0;
    }
    return due;
  };

  /** A connection is free again: it takes the oldest request waiting, or in a closed loop a new one. */
  const free = (connection: Connection): void => {
    const due =
      rate === 0 ? (performance.now() < end ? performance.now() : undefined) : nextWaiting();
    if (due !== undefined) send(connection, due);
    else idle.push(connection);
  };

  /** Takes a connection into use; `first` is the due time of its first request, undefined: it is idle. */
  const adopt = (socket: Socket, first: number | undefined): void => {
    open += 1;
    connectionsPeak = Math.max(connectionsPeak, open);
    const connection: Connection = { socket, due: undefined, pending: Buffer.alloc(0) };
    all.add(connection);
    if (first === undefined) idle.push(connection);
    else if (socket.connecting)
      socket.once('connect', () => send(connection, rate === 0 ? performance.now() : first));
    else send(connection, rate === 0 ? performance.now() : first);
    socket.on('data', (chunk: Buffer) => {
      connection.pending =
        connection.pending.length === 0 ? chunk : Buffer.concat([connection.pending, chunk]);
      const headEnd = connection.pending.indexOf(HEAD_END);
      if (headEnd < 0 || connection.due === undefined) return;
      const head = connection.pending.subarray(0, headEnd).toString('latin1');
      const length = /\r\ncontent-length: *(\d+)/i.exec(head)?.[1];
      const total = headEnd + HEAD_END.length + Number(length ?? 0);
      if (connection.pending.length < total) return;
      connection.pending = connection.pending.subarray(total);
      record(connection.due, Number(head.slice(9, 12)));
      connection.due = undefined;
      if (/\r\nconnection: *close/i.test(head)) socket.destroy();
      else free(connection);
    });
    socket.on('error', () => socket.destroy());
    socket.once('close', () => {
      open -= 1;
      all.delete(connection);
      const at = idle.indexOf(connection);
      if (at >= 0) idle.splice(at, 1);
      if (connection.due !== undefined && connection.due >= countedFrom) unanswered += 1;
      connection.due = undefined;
      // The requests waiting for a connection get a new one.
      const due = finished ? undefined : nextWaiting();
      if (due !== undefined) opened(due);
    });
  };

  const opened = (first: number): void =>
    adopt(connect({ port, host: '127.0.0.1', noDelay: true }), first);

  const dispatch = (due: number): void => {
    const connection = idle.pop();
    if (connection !== undefined) send(connection, due);
    else if (open < connectionsMax) opened(due);
    else waiting.push(due);
  };

  return new Promise((resolve) => {
    for (const socket of ready) adopt(socket, rate === 0 ? start : undefined);
    if (rate === 0) for (let i = ready.length; i < connectionsMax; i++) opened(start);
    const ticker = setInterval(() => {
      const now = performance.now();
      if (rate > 0) {
        // Once the run is over, every request due before its end is due: (end - start) need not be
        // exactly seconds × 1000 in floating point, and the last one must not be lost to the
        // rounding.
        const dueCount =
          now >= end ? Math.ceil(seconds * rate - 1e-9) : Math.floor(((now - start) * rate) / 1000);
        if (sent < dueCount && now >= countedFrom)
          generatorLagMax_ms = Math.max(generatorLagMax_ms, now - (start + (sent * 1000) / rate));
        for (; sent < dueCount; sent++) dispatch(start + (sent * 1000) / rate);
      }
      const drained = idle.length === open && waitingHead === waiting.length;
      if (now < end || (!drained && now < end + DRAIN_MS)) return;
      clearInterval(ticker);
      finished = true;
      for (; waitingHead < waiting.length; waitingHead++)
        if ((waiting[waitingHead] as number) >= countedFrom) unanswered += 1;
      for (const connection of all) {
        if (connection.due !== undefined && connection.due >= countedFrom) unanswered += 1;
        connection.due = undefined;
        connection.socket.destroy();
      }
      resolve({
        latencies,
        unanswered,
        countedSeconds: seconds - schedule.warmUpSeconds,
        connectionsPeak,
        generatorLagMax_ms,
      });
    }, TICK_MS);
  });
}

function connected(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ port, host: '127.0.0.1', noDelay: true });
    socket.once('connect', () => resolve(socket)).once('error', reject);
  });
}
