// A new trace's sampling decision, for a request that continues no caller's trace (issue 51: a
// request not sampled costs almost nothing). Every sampler here decides a new trace from its id
// alone, and the id is random: so the id is drawn as four 32-bit words, the decision is made on
// the words, and the id is written as hex only for a trace that is recorded, where the SDK's id
// generator writes every id and its ratio sampler reads it back character by character
// (docs/performance.md#tracing says what each cost).
//
// The decision is the SDK's own, on the same id: TraceIdRatioBasedSampler samples an id when the
// XOR of its four 8-digit groups (the four words) is below ⌊ratio × (2³² − 1)⌋, or always at
// ratio 1; the always_* samplers do not look at the id. test/features/new-traces.test.ts holds both
// to the SDK's samplers over random and edge ids, so that an SDK that changes its rule fails it. A
// request with a caller's traceparent is decided by the SDK's sampler itself (tracing.ts).
import type { SamplerName } from './options.js';

/** The SDK's bound for a ratio: an id whose words' XOR is below it is sampled. */
function ratioBound(ratio: number): number {
  return ratio >= 1 ? 0x1_0000_0000 : Math.floor(Math.max(ratio, 0) * 0xffff_ffff);
}

/** Two lower-case hex digits for each byte. */
const HEX_BYTES: readonly string[] = Array.from({ length: 256 }, (_, byte) =>
  byte.toString(16).padStart(2, '0'),
);

function wordHex(word: number): string {
  return (
    (HEX_BYTES[word >>> 24] as string) +
    (HEX_BYTES[(word >>> 16) & 0xff] as string) +
    (HEX_BYTES[(word >>> 8) & 0xff] as string) +
    (HEX_BYTES[word & 0xff] as string)
  );
}

/** The 32 hex digits of the id the four words make, most significant first. */
export function traceIdHex(w0: number, w1: number, w2: number, w3: number): string {
  return wordHex(w0) + wordHex(w1) + wordHex(w2) + wordHex(w3);
}

const randomWord = (): number => (Math.random() * 0x1_0000_0000) >>> 0;

export class NewTraces {
  /** Ids whose words' XOR is below this are sampled: 0 samples none, 2³² every one. */
  private readonly bound: number;

  constructor(sampler: SamplerName, ratio: number) {
    this.bound = sampler.endsWith('always_off')
      ? 0
      : sampler.endsWith('always_on')
        ? 0x1_0000_0000
        : ratioBound(ratio);
  }

  /**
   * Whether the sampler records a new trace with this id (its four words, most significant first),
   * for an id next() can draw: never all zeros, which the SDK's samplers refuse as invalid.
   */
  sampled(w0: number, w1: number, w2: number, w3: number): boolean {
    return (w0 ^ w1 ^ w2 ^ w3) >>> 0 < this.bound;
  }

  /**
   * A new trace's id when it is sampled, else undefined (and no id is written). Drawn as the SDK's
   * RandomIdGenerator draws one: four words of Math.random, and an id of all zeros (invalid in W3C
   * Trace Context) made valid by a last byte of 1.
   */
  next(): string | undefined {
    if (this.bound === 0) return undefined;
    const w0 = randomWord();
    const w1 = randomWord();
    const w2 = randomWord();
    let w3 = randomWord();
    if ((w0 | w1 | w2 | w3) === 0) w3 = 1;
    return this.sampled(w0, w1, w2, w3) ? traceIdHex(w0, w1, w2, w3) : undefined;
  }
}
