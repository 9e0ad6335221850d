// A recorded span: the SDK's ReadableSpan, the shape its exporters and serializers read, built
// directly rather than by the SDK's tracer. Only sampled work ever makes one (the sampling decision
// comes first, tracing.ts), its attributes are set as plain properties in the order they are
// recorded, and it is handed to the export queue when it ends. The SDK's own span checks and copies
// each attribute, keeps limits and a processor chain, and loses the Level 2 random trace flag; none
// of that is needed for spans whose every attribute is ours.
import {
  SpanStatusCode,
  type Attributes,
  type AttributeValue,
  type HrTime,
  type Link,
  type SpanContext,
  type SpanKind,
  type SpanStatus,
} from '@opentelemetry/api';
import { hrTime, hrTimeDuration, type InstrumentationScope } from '@opentelemetry/core';
import type { Resource } from '@opentelemetry/resources';
import type { ReadableSpan, TimedEvent } from '@opentelemetry/sdk-trace-base';

/** What every span of one tracer shares: its resource and its instrumentation scope. */
export interface SpanOrigin {
  readonly resource: Resource;
  readonly scope: InstrumentationScope;
}

const NOT_ENDED: HrTime = [0, 0];

export class RecordedSpan implements ReadableSpan {
  readonly startTime: HrTime = hrTime();
  endTime: HrTime = NOT_ENDED;
  duration: HrTime = NOT_ENDED;
  ended = false;
  status: SpanStatus = { code: SpanStatusCode.UNSET };
  readonly events: TimedEvent[] = [];
  readonly links: Link[] = [];
  readonly droppedAttributesCount = 0;
  readonly droppedEventsCount = 0;
  readonly droppedLinksCount = 0;
  readonly resource: Resource;
  readonly instrumentationScope: InstrumentationScope;

  constructor(
    public name: string,
    readonly kind: SpanKind,
    private readonly context: SpanContext,
    readonly parentSpanContext: SpanContext | undefined,
    readonly attributes: Attributes,
    origin: SpanOrigin,
  ) {
    this.resource = origin.resource;
    this.instrumentationScope = origin.scope;
  }

  spanContext(): SpanContext {
    return this.context;
  }

  setAttribute(key: string, value: AttributeValue): void {
    this.attributes[key] = value;
  }

  addEvent(name: string, attributes: Attributes): void {
    this.events.push({ name, attributes, time: hrTime(), droppedAttributesCount: 0 });
  }

  fail(): void {
    this.status = { code: SpanStatusCode.ERROR };
  }

  /** Ends the span: its end time and duration are set. Returns false when it had ended already. */
  end(): boolean {
    if (this.ended) return false;
    this.ended = true;
    this.endTime = hrTime();
    this.duration = hrTimeDuration(this.startTime, this.endTime);
    return true;
  }
}
