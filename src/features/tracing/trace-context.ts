// The caller's trace, from W3C Trace Context headers (Level 2). `traceparent` is parsed by the SDK's
// own parser (@opentelemetry/core): the version rules, the all-zero ids, a later version's extra
// fields. `tracestate` is parsed here, by the current rules, which the SDK's parser predates: keys
// may hold `@` anywhere after their first character, a header with one invalid member (or a key
// twice, or more than 32 members) is dropped whole rather than member by member, and it is read
// only once the traceparent is valid (the specification forbids reading it otherwise).
import type { SpanContext, TraceState } from '@opentelemetry/api';
import { parseTraceParent } from '@opentelemetry/core';

/** Trace flags (W3C Trace Context): sampled, and Level 2's random (the trace id's right 7 bytes are random). */
export const SAMPLED_FLAG = 0x01;
export const RANDOM_FLAG = 0x02;

/** The most list members a tracestate may hold. */
export const TRACESTATE_MEMBERS_MAX = 32;

const KEY = /^[a-z0-9][a-z0-9_\-*/@]{0,255}$/;
/** Printable ASCII but `,` and `=`, up to 256 characters, not ending in a space. */
const VALUE = /^[\x20-\x2b\x2d-\x3c\x3e-\x7e]{0,255}[\x21-\x2b\x2d-\x3c\x3e-\x7e]$/;

/** The caller's span, as the SDK's samplers and exporters read it; undefined for a missing or malformed traceparent. */
export function remoteParent(header: string | string[] | undefined): SpanContext | undefined {
  // node joins repeated headers into one line; more than one traceparent is malformed.
  if (typeof header !== 'string') return undefined;
  const parsed = parseTraceParent(header);
  return parsed === null ? undefined : { ...parsed, isRemote: true };
}

/** The caller's tracestate, or undefined for none or one that breaks a rule (dropped whole). */
export function parseTraceState(header: string | string[] | undefined): TraceState | undefined {
  if (header === undefined) return undefined;
  const members: [string, string][] = [];
  // Repeated fields are one list, joined by commas (RFC 9110 §5.3).
  for (const part of (typeof header === 'string' ? header : header.join(',')).split(',')) {
    // Spaces and tabs around a member are not part of it; an empty member is allowed, and ignored.
    const member = part.replace(/^[ \t]+|[ \t]+$/g, '');
    if (member === '') continue;
    const eq = member.indexOf('=');
    const key = member.slice(0, eq);
    const value = member.slice(eq + 1);
    if (eq <= 0 || !KEY.test(key) || !VALUE.test(value)) return undefined;
    if (members.some(([known]) => known === key)) return undefined;
    members.push([key, value]);
    if (members.length > TRACESTATE_MEMBERS_MAX) return undefined;
  }
  return members.length === 0 ? undefined : new W3CTraceState(members);
}

/** A tracestate as the OpenTelemetry API holds one: immutable, its members in order. */
class W3CTraceState implements TraceState {
  constructor(private readonly members: readonly (readonly [string, string])[]) {}

  get(key: string): string | undefined {
    return this.members.find(([known]) => known === key)?.[1];
  }

  /** The changed or added member goes first, as the specification asks. */
  set(key: string, value: string): TraceState {
    return new W3CTraceState([[key, value], ...this.members.filter(([known]) => known !== key)]);
  }

  unset(key: string): TraceState {
    return new W3CTraceState(this.members.filter(([known]) => known !== key));
  }

  serialize(): string {
    return this.members.map(([key, value]) => `${key}=${value}`).join(',');
  }
}
