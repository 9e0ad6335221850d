// The machine a run measured on, and where runs write their raw files: bench/results/, which git
// ignores (the current table lives in docs/performance.md).
import { mkdirSync } from 'node:fs';
import { cpus, release, totalmem } from 'node:os';
import { fileURLToPath } from 'node:url';

export interface Machine {
  readonly cores: number;
  readonly cpuModel: string;
  readonly memory_GiB: number;
  readonly node: string;
  readonly os: string;
}

export function describeMachine(): Machine {
  const all = cpus();
  return {
    cores: all.length,
    cpuModel: all[0]?.model.trim() ?? 'unknown',
    memory_GiB: Math.round(totalmem() / 2 ** 30),
    node: process.version,
    os: `${process.platform} ${release()}`,
  };
}

/** bench/results/NAME/, made if missing. */
export function resultsFolder(name: string): string {
  const dir = fileURLToPath(new URL(`../../bench/results/${name}/`, import.meta.url));
  mkdirSync(dir, { recursive: true });
  return dir.replace(/\/$/, '');
}

/** A run's date and time, for file names: 2026-11-25T15-04-05Z. */
export const runStamp = (): string =>
  new Date()
    .toISOString()
    .replace(/\.\d+Z$/, 'Z')
    .replace(/:/g, '-');
