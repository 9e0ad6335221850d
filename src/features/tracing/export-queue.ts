// The export queue: the spans that ended wait here (span-batches.ts) for the collector, at most
// OTEL_BSP_MAX_QUEUE_SIZE of them, and leave one batch at a time (OTEL_BSP_MAX_EXPORT_BATCH_SIZE),
// when a batch is full or OTEL_BSP_SCHEDULE_DELAY after the first span waiting, as the SDK's batch
// span processor does. A collector that is down or slow never reaches a request: a span that finds
// the queue full is dropped and counted, as is every span of an export that failed.
//
// A collector that asks to wait (429, 503: otlp-http.ts) is let wait: nothing is sent until its
// Retry-After has passed (or, without one, a backoff that doubles from 1 s to 30 s), and then the
// same batch goes again, while its OTEL_BSP_EXPORT_TIMEOUT lasts. Meanwhile spans queue up to the
// bound; those past it, and a batch whose time ran out, are dropped and counted as `throttled`.
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import type { Logger } from '../../observe/log.js';
import type { ExportAnswer, OtlpSender } from './otlp-http.js';
import type { SpanBatches } from './span-batches.js';

export type DropReason = 'queue_full' | 'export_failed' | 'throttled';
export const DROP_REASONS: readonly DropReason[] = ['queue_full', 'export_failed', 'throttled'];

/** Spans handed to the exporter, and dropped, as plain numbers that /metrics reads when scraped. */
export class SpanCounts {
  exported = 0;
  readonly dropped: Record<DropReason, number> = { queue_full: 0, export_failed: 0, throttled: 0 };
}

export interface QueueBounds {
  readonly maxQueueSize: number;
  readonly maxExportBatchSize: number;
  readonly scheduledDelayMs: number;
  /** How long one batch may take to leave, its waits for a busy collector included. */
  readonly exportTimeoutMs: number;
}

/** The backoff when a collector asks to wait without saying how long. */
const BACKOFF_FIRST_MS = 1_000;
const BACKOFF_MAX_MS = 30_000;

export class ExportQueue {
  private timer: NodeJS.Timeout | undefined;
  /** The export out, its waits included: one at a time. */
  private sending: Promise<void> | undefined;
  private pausedUntilMs = 0;
  private backoffMs = BACKOFF_FIRST_MS;
  /** What the log last said: once per outage, or per wait, not per batch. */
  private state: 'delivering' | 'failing' | 'waiting' = 'delivering';

  constructor(
    private readonly batches: SpanBatches,
    private readonly sender: OtlpSender,
    private readonly bounds: QueueBounds,
    private readonly counts: SpanCounts,
    private readonly log: Logger,
  ) {}

  add(span: ReadableSpan): void {
    if (this.batches.count >= this.bounds.maxQueueSize) {
      this.counts.dropped[Date.now() < this.pausedUntilMs ? 'throttled' : 'queue_full'] += 1;
      return;
    }
    this.batches.add(span);
    if (this.batches.count >= this.bounds.maxExportBatchSize) this.exportNow();
    else this.timer ??= this.later(() => this.exportNow(), this.bounds.scheduledDelayMs);
  }

  /** Sends what waits, a batch at a time, until nothing does, the collector asks to wait, or `deadlineMs` passes. */
  async flush(deadlineMs: number): Promise<void> {
    this.stopTimer();
    while (Date.now() < deadlineMs) {
      await this.sending;
      if (this.batches.count === 0 || Date.now() < this.pausedUntilMs) return;
      this.exportNow();
    }
  }

  close(): void {
    this.stopTimer();
    this.sender.close();
  }

  private exportNow(): void {
    if (this.sending !== undefined || this.batches.count === 0) return;
    this.stopTimer();
    this.sending = this.exportBatch().finally(() => {
      this.sending = undefined;
      if (this.batches.count >= this.bounds.maxExportBatchSize) this.exportNow();
      else if (this.batches.count > 0)
        this.timer ??= this.later(() => this.exportNow(), this.bounds.scheduledDelayMs);
    });
  }

  private async exportBatch(): Promise<void> {
    const spans = Math.min(this.batches.count, this.bounds.maxExportBatchSize);
    const body = this.batches.take(spans);
    this.counts.exported += spans;
    const deadlineMs = Date.now() + this.bounds.exportTimeoutMs;
    for (;;) {
      const answer = await this.sent(body);
      if (answer.kind === 'delivered') {
        this.delivered();
        return;
      }
      if (answer.kind === 'failed') {
        this.failed(spans, answer.reason);
        return;
      }
      const waitMs = this.waitFor(answer);
      const late = Date.now() + waitMs > deadlineMs;
      if (late) this.counts.dropped.throttled += spans;
      await new Promise<void>((resolve) => this.later(resolve, waitMs));
      if (late) return;
    }
  }

  /** The sender's answer; a sender that throws (its thread could not start) is a failed export, never a crash. */
  private async sent(body: Uint8Array): Promise<ExportAnswer> {
    try {
      return await this.sender.send(body);
    } catch (error) {
      return { kind: 'failed', reason: error instanceof Error ? error.message : String(error) };
    }
  }

  private delivered(): void {
    if (this.state !== 'delivering') this.log.info('spans reach the collector again');
    this.state = 'delivering';
    this.backoffMs = BACKOFF_FIRST_MS;
  }

  private failed(spans: number, reason: string): void {
    this.counts.dropped.export_failed += spans;
    // Once per outage, not per batch: the counter says how many.
    if (this.state !== 'failing')
      this.log.warn(
        'spans could not be exported: dropped, and counted in otel_spans_dropped_total',
        { error: reason },
      );
    this.state = 'failing';
  }

  /** How long the collector asked to wait (or the backoff's next step); nothing is sent until then. */
  private waitFor(answer: Extract<ExportAnswer, { kind: 'wait' }>): number {
    // A Retry-After of 0 (or a date past) still waits the backoff's first step: never a tight loop.
    let waitMs =
      answer.retryAfterMs === undefined
        ? undefined
        : Math.max(answer.retryAfterMs, BACKOFF_FIRST_MS);
    if (waitMs === undefined) {
      // A little jitter, so that a fleet told to wait does not come back all at once.
      waitMs = Math.round(this.backoffMs * (0.8 + Math.random() * 0.4));
      this.backoffMs = Math.min(this.backoffMs * 2, BACKOFF_MAX_MS);
    }
    this.pausedUntilMs = Date.now() + waitMs;
    if (this.state !== 'waiting')
      this.log.warn(
        'the collector asks to wait: no export until then; spans past the queue are dropped, and counted in otel_spans_dropped_total',
        { status: answer.status, waitMs },
      );
    this.state = 'waiting';
    return waitMs;
  }

  private later(run: () => void, ms: number): NodeJS.Timeout {
    const timer = setTimeout(() => {
      if (this.timer === timer) this.timer = undefined;
      run();
    }, ms);
    timer.unref();
    return timer;
  }

  private stopTimer(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }
}
