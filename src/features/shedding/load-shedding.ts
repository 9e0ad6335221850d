// Load shedding (docs/load-shedding.md): past a saturation signal, a new request is turned away
// with 503 and a jittered Retry-After before any of its work is done, so that the requests already
// admitted keep their latency instead of every request slowing down together. Off unless an
// option sets a signal's threshold. Two signals, each read as a plain number on the request path:
//
// - requests waiting: admitted requests whose handler waits (for the database, nearly always) and
//   has not answered. It is the backlog of every store alike (a group commit's queue, PostgreSQL's
//   pool waiters, a lock), read where the service sees it whole, and by Little's law it bounds an
//   admitted request's wait: at most the threshold of requests ahead of it. Past it, every new
//   request is shed.
// - the event loop's busy share: the part of the last moments the loop spent working rather than
//   waiting for input. It is the saturation of the process's one thread (CPU), which no store sees:
//   once the loop is busy all the time, requests queue unread in their sockets, where no count of
//   the process reaches, and a loop that still waits for input now and then has read all of them.
//   A share of new requests is shed, steered every few milliseconds by how far the busy share is
//   above its target: shedding all or nothing on a threshold swings between a window of admitted
//   overload and a window of idle refusal (docs/load-shedding.md tells how that was measured).
//
// /healthz, /readyz and /metrics are never shed: an operator and an orchestrator must see an
// overloaded service as alive, and see it overloaded.
import { performance, type EventLoopUtilization } from 'node:perf_hooks';
import { Counter, type Registry } from 'prom-client';
import { ApiError } from '../../http/errors.js';
import { Slot, type Call, type Entered, type PlacedStage } from '../../http/stages/stage.js';

export interface SheddingPolicy {
  /** Requests waiting at which new ones are shed; undefined: this signal is off. */
  readonly waitingMax?: number;
  /** The event loop's busy share (0 to 1) shedding holds it to; undefined: this signal is off. */
  readonly loopBusy?: number;
}

export type ShedSignal = 'waiting' | 'loop-busy';

/** The routes that are never shed. */
export const NEVER_SHED: ReadonlySet<string> = new Set(['/healthz', '/readyz', '/metrics']);

/** How often the loop's busy share is read and the share of requests shed steered. */
const SHED_UPDATE_MS = 15;
/**
 * Every SHED_UPDATE_MS, the share shed moves by GAIN × (busy share − target): a loop busy
 * throughout against a target of 80 % raises it by 0.1, from none to all in 150 ms; an idle loop
 * lowers it by 0.4. A saturated loop runs the timer late, once a long turn: the step grows with
 * the time that passed, so that the share rises as fast in time however long the turns are.
 */
const GAIN = 0.5;

/**
 * The share of new requests to shed after `elapsedMs` more of the loop at `busy` (0 to 1), from 0
 * to 1: an integral controller on the busy share. A busy share that is not a number (no time
 * passed) leaves the share as it was.
 */
export function nextShedShare(
  share: number,
  busy: number,
  target: number,
  elapsedMs: number,
): number {
  if (!Number.isFinite(busy)) return share;
  return Math.min(1, Math.max(0, share + GAIN * (busy - target) * (elapsedMs / SHED_UPDATE_MS)));
}

/** Retry-After, in whole seconds: from 1 to this, drawn anew for each response. */
const RETRY_AFTER_MAX_S = 3;

export const overloaded = (): ApiError =>
  new ApiError('OVERLOADED', {
    headers: { 'Retry-After': String(1 + Math.floor(Math.random() * RETRY_AFTER_MAX_S)) },
  });

export class LoadShedder {
  /** Admitted requests whose handler is waiting; the pipeline counts them in and out. */
  waiting = 0;
  /** The share of new requests shed on the busy signal, steered every SHED_UPDATE_MS. */
  private share = 0;
  private readonly waitingMax: number;
  private readonly steering: NodeJS.Timeout | undefined;
  private readonly shed: Record<ShedSignal, () => void>;

  /** `random` draws which requests fall in the share shed (tests pass a fixed one). */
  constructor(
    policy: SheddingPolicy,
    service: string,
    registry: Registry | undefined,
    private readonly random: () => number = Math.random,
  ) {
    this.waitingMax = policy.waitingMax ?? Infinity;
    const target = policy.loopBusy;
    if (target !== undefined) {
      let last: EventLoopUtilization = performance.eventLoopUtilization();
      this.steering = setInterval(() => {
        const now = performance.eventLoopUtilization();
        const since = performance.eventLoopUtilization(now, last);
        this.share = nextShedShare(
          this.share,
          since.utilization,
          target,
          since.idle + since.active,
        );
        last = now;
      }, SHED_UPDATE_MS).unref();
    }
    const counter =
      registry === undefined
        ? undefined
        : new Counter<'service' | 'signal'>({
            name: 'http_requests_shed_total',
            help: 'Requests turned away with 503 before any work, by service and by the saturation signal that was past its threshold',
            labelNames: ['service', 'signal'],
            registers: [registry],
          });
    const count = (signal: ShedSignal): (() => void) => {
      const child = counter?.labels(service, signal);
      child?.inc(0);
      return () => child?.inc();
    };
    this.shed = { waiting: count('waiting'), 'loop-busy': count('loop-busy') };
  }

  /** The signal past its threshold, counted as one request shed; undefined: admit the request. */
  refuse(): ShedSignal | undefined {
    const signal: ShedSignal | undefined =
      this.waiting >= this.waitingMax
        ? 'waiting'
        : this.share > 0 && this.random() < this.share
          ? 'loop-busy'
          : undefined;
    if (signal !== undefined) this.shed[signal]();
    return signal;
  }

  stop(): void {
    if (this.steering !== undefined) clearInterval(this.steering);
  }
}

/** Set while the call's handler is counted among those waiting. */
const WAITING = new Slot<boolean>('counted waiting');

/**
 * The stage (stage.ts): after routing (the operational routes are never shed), before any of the
 * request's work; it counts each waiting handler in and out, the signal of `waitingMax`.
 */
export function sheddingStage(shedder: LoadShedder): PlacedStage {
  return {
    name: 'shedding',
    place: 'route',
    enter(call: Call): Entered {
      if (!NEVER_SHED.has(call.route) && shedder.refuse() !== undefined) throw overloaded();
      return undefined;
    },
    waits(call: Call): void {
      shedder.waiting += 1;
      WAITING.set(call, true);
    },
    settles(call: Call): void {
      if (WAITING.get(call) !== true) return;
      shedder.waiting -= 1;
      WAITING.set(call, false);
    },
    docs: {
      errors: () => [overloaded()],
    },
  };
}
