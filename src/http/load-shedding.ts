// Load shedding (docs/edge.md#load-shedding): past a saturation signal, a new request is turned away
// with 503 and a jittered Retry-After before any of its work is done, so that the requests already
// admitted keep their latency instead of every request slowing down together. Off unless an
// option sets a signal's threshold. Two signals, each read as a plain number on the request path:
//
// - requests waiting: admitted requests whose handler waits (for the database, nearly always) and
//   has not answered. It is the backlog of every store alike (a group commit's queue, PostgreSQL's
//   pool waiters, a lock), read where the service sees it whole, and by Little's law it bounds an
//   admitted request's wait: at most the threshold of requests ahead of it.
// - event-loop delay: the mean delay of the loop over the last sample window, past the sampling
//   timer's own period. It is the saturation of the process's one thread (CPU), which no store sees.
//
// /healthz, /readyz and /metrics are never shed: an operator and an orchestrator must see an
// overloaded service as alive, and see it overloaded.
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';
import { Counter, type Registry } from 'prom-client';
import { ApiError } from './errors.js';

export interface SheddingPolicy {
  /** Requests waiting at which new ones are shed; undefined: this signal is off. */
  readonly waitingMax?: number;
  /** Mean event-loop delay (ms) past which new requests are shed; undefined: this signal is off. */
  readonly loopDelayMs?: number;
}

export type ShedSignal = 'waiting' | 'loop-delay';

/** The routes that are never shed. */
export const NEVER_SHED: ReadonlySet<string> = new Set(['/healthz', '/readyz', '/metrics']);

/** How often the event-loop delay is sampled, and how long a window its mean covers. */
const LOOP_RESOLUTION_MS = 10;
const LOOP_WINDOW_MS = 250;

/** Retry-After, in whole seconds: from 1 to this, drawn anew for each answer. */
const RETRY_AFTER_MAX_S = 3;

export const overloaded = (): ApiError =>
  new ApiError('OVERLOADED', { headers: { 'Retry-After': String(1 + Math.floor(Math.random() * RETRY_AFTER_MAX_S)) } });

export class LoadShedder {
  /** Admitted requests whose handler is waiting; the pipeline counts them in and out. */
  waiting = 0;
  private loopDelayed = false;
  private readonly waitingMax: number;
  private readonly histogram: IntervalHistogram | undefined;
  private readonly sampler: NodeJS.Timeout | undefined;
  private readonly shed: Record<ShedSignal, () => void>;

  constructor(policy: SheddingPolicy, service: string, registry: Registry | undefined) {
    this.waitingMax = policy.waitingMax ?? Infinity;
    const threshold = policy.loopDelayMs;
    if (threshold !== undefined) {
      const histogram = monitorEventLoopDelay({ resolution: LOOP_RESOLUTION_MS });
      histogram.enable();
      this.histogram = histogram;
      // The histogram counts the timer's own period in every sample: the delay is what is past it.
      this.sampler = setInterval(() => {
        this.loopDelayed = histogram.count > 0 && histogram.mean / 1e6 - LOOP_RESOLUTION_MS > threshold;
        histogram.reset();
      }, LOOP_WINDOW_MS).unref();
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
    this.shed = { waiting: count('waiting'), 'loop-delay': count('loop-delay') };
  }

  /** The signal past its threshold, counted as one request shed; undefined: admit the request. */
  refuse(): ShedSignal | undefined {
    const signal: ShedSignal | undefined = this.waiting >= this.waitingMax ? 'waiting' : this.loopDelayed ? 'loop-delay' : undefined;
    if (signal !== undefined) this.shed[signal]();
    return signal;
  }

  stop(): void {
    if (this.sampler !== undefined) clearInterval(this.sampler);
    this.histogram?.disable();
  }
}
