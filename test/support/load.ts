// Load for reliability tests: a bounded number of requests in flight, and a seeded random source
// so that a failing run can be repeated with the same amounts and accounts.

/** Runs task(0) … task(count - 1) with at most `inFlight` running at once; results in index order. */
export async function runBounded<T>(
  count: number,
  inFlight: number,
  task: (index: number) => Promise<T>,
): Promise<T[]> {
  const results: T[] = new Array<T>(count);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < count) {
      const index = next++;
      results[index] = await task(index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(inFlight, count) }, worker));
  return results;
}

/** A small seeded generator (mulberry32): integers in [min, max]. */
export function seededRandom(seed: number): (min: number, max: number) => number {
  let state = seed >>> 0;
  return (min, max) => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    const unit = ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    return min + Math.floor(unit * (max - min + 1));
  };
}

/** Every total that some subset of `amounts` adds up to (amounts are small positive integers). */
export function subsetSums(amounts: readonly number[]): Set<number> {
  let sums = new Set([0]);
  for (const amount of amounts) sums = new Set([...sums, ...[...sums].map((sum) => sum + amount)]);
  return sums;
}
