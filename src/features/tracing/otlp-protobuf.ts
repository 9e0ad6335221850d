// OTLP/protobuf, as the spans this service records need it: each span is encoded once, when it
// ends, straight into one growing buffer (SpanBytes); an export is that buffer's first spans inside
// the request's envelope (the resource and the instrumentation scope, encoded once). Long or
// non-ASCII strings are written by Buffer's native UTF-8 writer, short ASCII ones and the ids' hex
// by a plain loop (cheaper than a native call for a few bytes); nothing is built per attribute, and
// the spans' objects die young, with the request that made them.
//
// The bytes are the SDK's own, byte for byte: the fields in the order, and with the defaults, of
// @opentelemetry/otlp-transformer's ProtobufTraceSerializer (test/features/otlp-encoding.test.ts
// proves it, and decodes the result with the official .proto definitions).
import type { Attributes, AttributeValue, HrTime, Link, SpanContext } from '@opentelemetry/api';
import type { InstrumentationScope } from '@opentelemetry/core';
import type { Resource } from '@opentelemetry/resources';
import type { ReadableSpan, TimedEvent } from '@opentelemetry/sdk-trace-base';

/** Protobuf wire types. */
const VARINT = 0;
const FIXED64 = 1;
const LEN = 2;
const FIXED32 = 5;
const TWO_32 = 0x1_0000_0000;
/** OTLP's span flags: the trace flags, and whether the parent's context came from another process. */
const HAS_IS_REMOTE = 0x100;
const IS_REMOTE = 0x200;

/** A protobuf writer over one growing Buffer. */
export class ProtoWriter {
  buf: Buffer;
  pos = 0;

  constructor(size = 16 * 1024) {
    this.buf = Buffer.allocUnsafe(size);
  }

  /** Room for `bytes` more. */
  room(bytes: number): void {
    if (this.pos + bytes > this.buf.length) this.grow(bytes);
  }

  private grow(bytes: number): void {
    let size = this.buf.length * 2;
    while (size < this.pos + bytes) size *= 2;
    const grown = Buffer.allocUnsafe(size);
    this.buf.copy(grown, 0, 0, this.pos);
    this.buf = grown;
  }

  tag(field: number, wire: number): void {
    const key = field * 8 + wire;
    if (key > 0x7f) {
      this.uint32(key);
      return;
    }
    this.room(1);
    this.buf[this.pos++] = key;
  }

  uint32(value: number): void {
    this.room(5);
    let v = value >>> 0;
    while (v > 0x7f) {
      this.buf[this.pos++] = (v & 0x7f) | 0x80;
      v >>>= 7;
    }
    this.buf[this.pos++] = v;
  }

  /** An int64 varint: a negative one in two's complement, ten bytes. */
  int64(value: number): void {
    if (value >= 0 && value < TWO_32) {
      this.uint32(value);
      return;
    }
    const magnitude = Math.abs(value);
    let low = magnitude % TWO_32;
    let high = Math.floor(magnitude / TWO_32) % TWO_32;
    if (value < 0) {
      // Two's complement of the 64-bit magnitude: invert, add one (carrying into the high half).
      low = (~low >>> 0) + 1;
      high = ~high >>> 0;
      if (low === TWO_32) {
        low = 0;
        high = (high + 1) >>> 0;
      }
    }
    this.room(10);
    while (high > 0 || low > 0x7f) {
      this.buf[this.pos++] = (low & 0x7f) | 0x80;
      low = ((low >>> 7) | (high << 25)) >>> 0;
      high >>>= 7;
    }
    this.buf[this.pos++] = low;
  }

  fixed32(value: number): void {
    this.room(4);
    this.le32(value);
  }

  fixed64(low: number, high: number): void {
    this.room(8);
    this.le32(low);
    this.le32(high);
  }

  private le32(value: number): void {
    const buf = this.buf;
    buf[this.pos++] = value & 0xff;
    buf[this.pos++] = (value >>> 8) & 0xff;
    buf[this.pos++] = (value >>> 16) & 0xff;
    buf[this.pos++] = (value >>> 24) & 0xff;
  }

  double(value: number): void {
    this.room(8);
    this.buf.writeDoubleLE(value, this.pos);
    this.pos += 8;
  }

  /**
   * A length-delimited UTF-8 string. Short ASCII ones, nearly all of a span's, are copied here
   * character by character: a call into Buffer's native writer costs more than the copy.
   */
  string(text: string): void {
    const length = text.length;
    this.room(length * 3 + 5);
    if (length < SHORT_STRING) {
      const buf = this.buf;
      let at = this.pos + 1;
      let i = 0;
      for (; i < length; i++) {
        const code = text.charCodeAt(i);
        if (code > 0x7f) break;
        buf[at++] = code;
      }
      if (i === length) {
        buf[this.pos] = length;
        this.pos = at;
        return;
      }
    }
    const start = this.open();
    this.pos += this.buf.write(text, this.pos);
    this.close(start);
  }

  /** Length-delimited bytes given as lower-case hex (an id). */
  hex(text: string): void {
    const bytes = text.length >>> 1;
    this.uint32(bytes);
    this.room(bytes);
    const buf = this.buf;
    for (let i = 0; i < text.length; i += 2)
      buf[this.pos++] = (nibble(text.charCodeAt(i)) << 4) | nibble(text.charCodeAt(i + 1));
  }

  bytes(data: Uint8Array): void {
    this.uint32(data.length);
    this.room(data.length);
    this.buf.set(data, this.pos);
    this.pos += data.length;
  }

  /** Starts a length-delimited field's content, a byte kept for its length: give the result to close(). */
  open(): number {
    this.room(1);
    return this.pos++;
  }

  /** Writes the length of the content begun at `start`, moving the content on when it needs more than one byte. */
  close(start: number): void {
    const length = this.pos - start - 1;
    const size = varintSize(length);
    if (size > 1) {
      this.room(size - 1);
      this.buf.copyWithin(start + size, start + 1, this.pos);
      this.pos += size - 1;
    }
    let v = length;
    let at = start;
    while (v > 0x7f) {
      this.buf[at++] = (v & 0x7f) | 0x80;
      v >>>= 7;
    }
    this.buf[at] = v;
  }
}

/** Strings shorter than this (and ASCII) are copied by hand; a one-byte length holds them. */
const SHORT_STRING = 128;

/** A lower-case hex digit's value. */
function nibble(code: number): number {
  return code < 0x3a ? code - 0x30 : code - 0x57;
}

function varintSize(value: number): number {
  let size = 1;
  for (let v = value >>> 7; v > 0; v >>>= 7) size += 1;
  return size;
}

/** An HrTime as fixed64 nanoseconds since the epoch, exactly: seconds split at 2^16 keeps every product below 2^53. */
function time(w: ProtoWriter, [seconds, nanos]: HrTime): void {
  const upper = Math.floor(seconds / 0x10000);
  const upperNanos = upper * 1e9;
  const lowerNanos = (seconds - upper * 0x10000) * 1e9 + nanos;
  let low = (upperNanos % 0x10000) * 0x10000 + (lowerNanos % TWO_32);
  let high = Math.floor(upperNanos / 0x10000) + Math.floor(lowerNanos / TWO_32);
  if (low >= TWO_32) {
    low -= TWO_32;
    high += 1;
  }
  w.fixed64(low, high);
}

/** A repeated KeyValue field, one entry per own property, in order. */
function attributes(w: ProtoWriter, values: Attributes, field: number): void {
  for (const key in values) {
    if (!Object.prototype.hasOwnProperty.call(values, key)) continue;
    w.tag(field, LEN);
    const entry = w.open();
    w.tag(1, LEN);
    w.string(key);
    w.tag(2, LEN);
    const value = w.open();
    anyValue(w, values[key]);
    w.close(value);
    w.close(entry);
  }
}

/** An AnyValue's content; nothing for a value no field holds (as the SDK writes it). */
function anyValue(w: ProtoWriter, value: AttributeValue | null | undefined): void {
  if (typeof value === 'string') {
    w.tag(1, LEN);
    w.string(value);
  } else if (typeof value === 'boolean') {
    w.tag(2, VARINT);
    w.uint32(value ? 1 : 0);
  } else if (typeof value === 'number') {
    if (Number.isInteger(value) && value >= -(2 ** 63) && value < 2 ** 63) {
      w.tag(3, VARINT);
      w.int64(value);
    } else {
      w.tag(4, FIXED64);
      w.double(value);
    }
  } else if ((value as unknown) instanceof Uint8Array) {
    w.tag(7, LEN);
    w.bytes(value as unknown as Uint8Array);
  } else if (Array.isArray(value)) {
    w.tag(5, LEN);
    const array = w.open();
    for (const item of value as readonly (AttributeValue | null | undefined)[]) {
      w.tag(1, LEN);
      const entry = w.open();
      anyValue(w, item);
      w.close(entry);
    }
    w.close(array);
  } else if (typeof value === 'object' && value !== null) {
    w.tag(6, LEN);
    const list = w.open();
    attributes(w, value, 1);
    w.close(list);
  }
}

function flagsOf(context: SpanContext, remoteParent: boolean | undefined): number {
  return (context.traceFlags & 0xff) | HAS_IS_REMOTE | (remoteParent === true ? IS_REMOTE : 0);
}

function event(
  w: ProtoWriter,
  { time: at, name, attributes: values, droppedAttributesCount }: TimedEvent,
): void {
  w.tag(11, LEN);
  const start = w.open();
  w.tag(1, FIXED64);
  time(w, at);
  w.tag(2, LEN);
  w.string(name);
  if (values !== undefined) attributes(w, values, 3);
  w.tag(4, VARINT);
  w.uint32(droppedAttributesCount ?? 0);
  w.close(start);
}

/** A span's or a link's fields 1-3, alike in both messages: trace id, span id, trace state. */
function identity(w: ProtoWriter, context: SpanContext): void {
  w.tag(1, LEN);
  w.hex(context.traceId);
  w.tag(2, LEN);
  w.hex(context.spanId);
  const state = context.traceState?.serialize();
  if (state !== undefined && state !== '') {
    w.tag(3, LEN);
    w.string(state);
  }
}

function link(w: ProtoWriter, { context, attributes: values, droppedAttributesCount }: Link): void {
  w.tag(13, LEN);
  const start = w.open();
  identity(w, context);
  if (values !== undefined) attributes(w, values, 4);
  w.tag(5, VARINT);
  w.uint32(droppedAttributesCount ?? 0);
  w.tag(6, FIXED32);
  w.fixed32(flagsOf(context, context.isRemote));
  w.close(start);
}

/** One span, as ScopeSpans' `spans` field (2): its tag, its length, its fields. */
export function writeSpan(w: ProtoWriter, span: ReadableSpan): void {
  w.tag(2, LEN);
  const start = w.open();
  const context = span.spanContext();
  identity(w, context);
  const parent = span.parentSpanContext;
  if (parent !== undefined && parent.spanId !== '') {
    w.tag(4, LEN);
    w.hex(parent.spanId);
  }
  w.tag(5, LEN);
  w.string(span.name);
  // The API's kinds start at INTERNAL = 0; OTLP's at 1 (0 is unspecified).
  w.tag(6, VARINT);
  w.uint32(span.kind + 1);
  w.tag(7, FIXED64);
  time(w, span.startTime);
  w.tag(8, FIXED64);
  time(w, span.endTime);
  attributes(w, span.attributes, 9);
  w.tag(10, VARINT);
  w.uint32(span.droppedAttributesCount);
  for (const one of span.events) event(w, one);
  w.tag(12, VARINT);
  w.uint32(span.droppedEventsCount);
  for (const one of span.links) link(w, one);
  w.tag(14, VARINT);
  w.uint32(span.droppedLinksCount);
  w.tag(15, LEN);
  const status = w.open();
  if (span.status.message !== undefined && span.status.message !== '') {
    w.tag(2, LEN);
    w.string(span.status.message);
  }
  w.tag(3, VARINT);
  w.uint32(span.status.code);
  w.close(status);
  w.tag(16, FIXED32);
  w.fixed32(flagsOf(context, parent?.isRemote));
  w.close(start);
}

/**
 * The ExportTraceServiceRequest around spans already written (writeSpan): one ResourceSpans of one
 * ScopeSpans, since every span of a tracer shares its resource and scope.
 */
export class RequestEnvelope {
  private readonly resource: Buffer;
  private readonly scope: Buffer;
  private readonly scopeSchema: Buffer;
  private readonly resourceSchema: Buffer;

  constructor(resource: Resource, scope: InstrumentationScope) {
    this.resource = encoded((w) => {
      w.tag(1, LEN);
      const start = w.open();
      attributes(w, resource.attributes, 1);
      w.tag(2, VARINT);
      w.uint32(0);
      w.close(start);
    });
    this.scope = encoded((w) => {
      w.tag(1, LEN);
      const start = w.open();
      w.tag(1, LEN);
      w.string(scope.name);
      if (scope.version !== undefined && scope.version !== '') {
        w.tag(2, LEN);
        w.string(scope.version);
      }
      w.close(start);
    });
    this.scopeSchema = schemaUrl(scope.schemaUrl);
    this.resourceSchema = schemaUrl(resource.schemaUrl);
  }

  /** The whole request: the envelope's head, `spans` (writeSpan's bytes, one after the other), its tail. */
  wrap(spans: Uint8Array): Buffer {
    const scopeSpans = this.scope.length + spans.length + this.scopeSchema.length;
    const resourceSpans =
      this.resource.length + 1 + varintSize(scopeSpans) + scopeSpans + this.resourceSchema.length;
    const head = encoded((w) => {
      w.tag(1, LEN);
      w.uint32(resourceSpans);
      w.room(this.resource.length);
      w.buf.set(this.resource, w.pos);
      w.pos += this.resource.length;
      w.tag(2, LEN);
      w.uint32(scopeSpans);
    }, this.resource.length + 16);
    return Buffer.concat([head, this.scope, spans, this.scopeSchema, this.resourceSchema]);
  }
}

function schemaUrl(url: string | undefined): Buffer {
  if (url === undefined || url === '') return Buffer.alloc(0);
  return encoded((w) => {
    w.tag(3, LEN);
    w.string(url);
  });
}

function encoded(write: (w: ProtoWriter) => void, size = 1024): Buffer {
  const w = new ProtoWriter(size);
  write(w);
  return w.buf.subarray(0, w.pos);
}
