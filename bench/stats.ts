// The few statistics the benchmark reports: medians across rounds, percentiles of latencies.

export function median(values: readonly number[]): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

/** Nearest-rank percentile of values sorted ascending; `fraction` is 0.5 for p50, 0.99 for p99. */
export function percentileOfSorted(sorted: Float64Array, fraction: number): number {
  if (sorted.length === 0) return NaN;
  const rank = Math.ceil(fraction * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1] as number;
}

/** Several rounds' latencies as one sorted sample, so a percentile covers every measured response. */
export function pooledSorted(samples: readonly Float64Array[]): Float64Array {
  const total = samples.reduce((sum, s) => sum + s.length, 0);
  const pooled = new Float64Array(total);
  let offset = 0;
  for (const sample of samples) {
    pooled.set(sample, offset);
    offset += sample.length;
  }
  return pooled.sort();
}
