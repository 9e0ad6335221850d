// A new trace is decided as its id is drawn (src/features/tracing/new-traces.ts): held here to the
// SDK's own samplers, the ones the service uses for a caller's trace, on the same ids.
import assert from 'node:assert/strict';
import { afterEach, test } from 'node:test';
import { ROOT_CONTEXT, SpanKind } from '@opentelemetry/api';
import { SamplingDecision } from '@opentelemetry/sdk-trace-base';
import { NewTraces, traceIdHex } from '../../src/features/tracing/new-traces.js';
import { SAMPLERS } from '../../src/features/tracing/options.js';
import { samplerOf } from '../../src/features/tracing/tracing.js';

const RATIOS = [0, 1e-9, 0.1, 0.5, 0.999999, 1];
const WORD = 0x1_0000_0000;

const realRandom = Math.random;
afterEach(() => {
  Math.random = realRandom;
});

/** Math.random answering these fractions in turn, and counting its calls. */
function scriptedRandom(fractions: readonly number[]): { calls: number } {
  const seen = { calls: 0 };
  Math.random = () => fractions[seen.calls++ % fractions.length] as number;
  return seen;
}

const randomWord = (): number => Math.floor(realRandom() * WORD);

/** Random ids, and those at the edges: all ones, a single 1, and XORs just below and at each ratio's bound. */
function ids(): [number, number, number, number][] {
  const words: [number, number, number, number][] = [
    [0xffff_ffff, 0xffff_ffff, 0xffff_ffff, 0xffff_ffff],
    [0, 0, 0, 1],
    [0xffff_ffff, 0, 0, 1],
  ];
  for (const ratio of RATIOS) {
    const bound = Math.floor(ratio * 0xffff_ffff);
    for (const xor of [bound - 1, bound, bound + 1])
      if (xor > 0 && xor < WORD) words.push([(xor ^ 0x0f0f_0f0f) >>> 0, 0x0f0f_0f0f, 0, 0]);
  }
  for (let i = 0; i < 3000; i += 1)
    words.push([randomWord(), randomWord(), randomWord(), randomWord()]);
  return words;
}

test("a new trace is sampled exactly when the SDK's sampler of the same settings samples its id: every sampler, random and edge ids", () => {
  const all = ids();
  for (const sampler of SAMPLERS)
    for (const samplerRatio of RATIOS) {
      const sdk = samplerOf({ sampler, samplerRatio });
      const ours = new NewTraces(sampler, samplerRatio);
      for (const [w0, w1, w2, w3] of all) {
        const id = traceIdHex(w0, w1, w2, w3);
        const expected =
          sdk.shouldSample(ROOT_CONTEXT, id, 'GET', SpanKind.SERVER, {}, []).decision ===
          SamplingDecision.RECORD_AND_SAMPLED;
        assert.equal(ours.sampled(w0, w1, w2, w3), expected, `${sampler} ${samplerRatio} ${id}`);
      }
    }
});

test('a sampled new trace has the id its four words make, as 32 lower-case hex digits, most significant first', () => {
  assert.equal(
    traceIdHex(0x0123_4567, 0x89ab_cdef, 0xfedc_ba98, 0x0000_000a),
    '0123456789abcdeffedcba980000000a',
  );
  // 0.5 × 2³² is 0x80000000 in every word: their XOR is 0, below every bound but ratio 0's.
  scriptedRandom([0.5]);
  assert.equal(new NewTraces('traceidratio', 0.1).next(), '80000000'.repeat(4));
});

test('an id of all zeros, invalid in W3C Trace Context, is never drawn: its last byte becomes 1, as in the SDK', () => {
  scriptedRandom([0]);
  assert.equal(new NewTraces('always_on', 1).next(), `${'0'.repeat(31)}1`);
});

test('a new trace that is not sampled gets no id, and always_off draws none at all', () => {
  // Words 0xffffffff, 0, 0, 0: their XOR is above 0.1's bound.
  const drawn = scriptedRandom([(WORD - 1) / WORD, 0, 0, 0]);
  assert.equal(new NewTraces('parentbased_traceidratio', 0.1).next(), undefined);
  assert.equal(drawn.calls, 4);
  const none = scriptedRandom([0.5]);
  assert.equal(new NewTraces('parentbased_always_off', 1).next(), undefined);
  assert.equal(new NewTraces('always_off', 1).next(), undefined);
  assert.equal(none.calls, 0);
});

test('the share of new traces sampled is the ratio: 0.1 of 200,000 within ±0.003 (4.5 standard deviations)', () => {
  const traces = new NewTraces('traceidratio', 0.1);
  let sampled = 0;
  for (let i = 0; i < 200_000; i += 1) if (traces.next() !== undefined) sampled += 1;
  assert.ok(Math.abs(sampled / 200_000 - 0.1) <= 0.003, `${sampled} of 200,000`);
});
