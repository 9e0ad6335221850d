// `npm run bench:decode`: what our Python-compatible JSON decoder costs against JSON.parse on the
// same bytes (decoded to text the way a Node server does, then parsed), shape by shape. The two
// alternate within each round, and the ratio reported is the median of the per-round ratios, so
// that a noisy machine moves both sides alike. `--quick` runs fewer rounds; `--only TEXT` the
// shapes whose name contains TEXT. Exits 1 if any shape costs more than RATIO_MAX.
import { parseArgs } from 'node:util';
import { decodeJson } from '../src/http/json/json-decode.js';
import { BODY_LIMITS } from '../src/server.js';
import { decodeShapes, type DecodeShape } from './decode-shapes.js';
import { median } from './stats.js';

/** The target: decoding costs at most this many times JSON.parse. */
export const RATIO_MAX = 2.5;

const { values: flags } = parseArgs({
  options: { quick: { type: 'boolean', default: false }, only: { type: 'string' } },
});
const ROUNDS = flags.quick === true ? 5 : 15;
/** Each side of a round runs for at least this long (and at least 3 times). */
const SIDE_MS = flags.quick === true ? 20 : 60;

interface Row {
  readonly shape: DecodeShape;
  readonly oursMs: number;
  readonly parseMs: number;
  readonly ratio: number;
}

/** Milliseconds per call of fn, over at least SIDE_MS. */
function timePerCall(fn: () => unknown): number {
  let calls = 0;
  const start = performance.now();
  let elapsed = 0;
  do {
    fn();
    calls++;
    elapsed = performance.now() - start;
  } while (elapsed < SIDE_MS || calls < 3);
  return elapsed / calls;
}

function measure(shape: DecodeShape): Row {
  const { bytes, encoding } = shape;
  const ours = (): unknown => decodeJson(bytes, BODY_LIMITS.nestingDepthMax);
  const baseline = (): unknown => JSON.parse(bytes.toString(encoding)) as unknown;
  // Warm both up so that the first round does not measure the compiler.
  timePerCall(ours);
  timePerCall(baseline);
  const oursMs: number[] = [];
  const parseMs: number[] = [];
  const ratios: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    // Alternate which side goes first, so neither always runs after the other's garbage.
    const first = round % 2 === 0 ? timePerCall(ours) : timePerCall(baseline);
    const second = round % 2 === 0 ? timePerCall(baseline) : timePerCall(ours);
    const [o, p] = round % 2 === 0 ? [first, second] : [second, first];
    oursMs.push(o);
    parseMs.push(p);
    ratios.push(o / p);
  }
  return { shape, oursMs: median(oursMs), parseMs: median(parseMs), ratio: median(ratios) };
}

function formatMs(ms: number): string {
  return ms >= 0.01 ? ms.toFixed(ms >= 1 ? 2 : 3) : `${(ms * 1000).toFixed(2)} µs`;
}

function formatSize(bytes: number): string {
  return bytes >= 1024 * 1024
    ? `${(bytes / 1024 / 1024).toFixed(2)} MiB`
    : bytes >= 1024
      ? `${(bytes / 1024).toFixed(1)} KiB`
      : `${bytes} B`;
}

const shapes = decodeShapes().filter(
  (shape) => flags.only === undefined || shape.name.includes(flags.only),
);
const rows: Row[] = [];
for (const shape of shapes) {
  process.stderr.write(`bench:decode: ${shape.name}\n`);
  rows.push(measure(shape));
}
const lines = [
  `Node ${process.version}, ${ROUNDS} rounds; ms per body (median), ratio = median of per-round ratios.`,
  '',
  '| Body | Size | decodeJson ms | JSON.parse ms | × JSON.parse |',
  '|---|---:|---:|---:|---:|',
  ...rows.map(
    (r) =>
      `| ${r.shape.name} | ${formatSize(r.shape.bytes.length)} | ${formatMs(r.oursMs)} | ${formatMs(r.parseMs)} | ${r.ratio.toFixed(2)}${r.ratio > RATIO_MAX ? ' **over**' : ''} |`,
  ),
  '',
];
process.stdout.write(lines.join('\n'));
const over = rows.filter((r) => r.ratio > RATIO_MAX);
if (over.length > 0)
  process.stderr.write(`bench:decode: ${over.length} shape(s) above ${RATIO_MAX} × JSON.parse\n`);
process.exitCode = over.length > 0 ? 1 : 0;
