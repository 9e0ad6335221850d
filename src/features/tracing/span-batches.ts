// The spans waiting for export, held as the protocol sends them. Protobuf (the default): each span
// encoded as it ends into one buffer (otlp-protobuf.ts), so that what waits is bytes, not objects,
// and an export is a slice of that buffer in its envelope. JSON: the spans themselves, turned into
// OTLP/JSON by the SDK's own serializer at export.
import { JsonTraceSerializer } from '@opentelemetry/otlp-transformer';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { ProtoWriter, RequestEnvelope, writeSpan } from './otlp-protobuf.js';
import type { SpanOrigin } from './recorded-span.js';

export interface SpanBatches {
  readonly contentType: 'application/x-protobuf' | 'application/json';
  /** Spans held. */
  readonly count: number;
  add(span: ReadableSpan): void;
  /** The first `spans` held, taken out, as one request's body. */
  take(spans: number): Uint8Array;
}

export class ProtobufBatches implements SpanBatches {
  readonly contentType = 'application/x-protobuf';
  private readonly writer = new ProtoWriter();
  private readonly envelope: RequestEnvelope;
  /** Where each span held ends in the writer's buffer. */
  private ends: number[] = [];

  constructor(origin: SpanOrigin) {
    this.envelope = new RequestEnvelope(origin.resource, origin.scope);
  }

  get count(): number {
    return this.ends.length;
  }

  add(span: ReadableSpan): void {
    writeSpan(this.writer, span);
    this.ends.push(this.writer.pos);
  }

  take(spans: number): Uint8Array {
    const w = this.writer;
    const end = this.ends[spans - 1] ?? w.pos;
    const body = this.envelope.wrap(w.buf.subarray(0, end));
    w.buf.copyWithin(0, end, w.pos);
    w.pos -= end;
    this.ends = this.ends.slice(spans).map((at) => at - end);
    return body;
  }
}

export class JsonBatches implements SpanBatches {
  readonly contentType = 'application/json';
  private spans: ReadableSpan[] = [];

  get count(): number {
    return this.spans.length;
  }

  add(span: ReadableSpan): void {
    this.spans.push(span);
  }

  take(spans: number): Uint8Array {
    const taken = this.spans.slice(0, spans);
    this.spans = this.spans.slice(spans);
    return JsonTraceSerializer.serializeRequest(taken) ?? new Uint8Array(0);
  }
}
