// How often each target held over a set of recorded runs, and how far its figures spread: the
// functions of bench/history.ts, apart so that the tests can call them.

/** What a results file holds that a tally reads (the rest of BenchResults is not needed, and older files lack some of it). */
export interface RecordedRun {
  readonly date: string;
  readonly quick: boolean;
  readonly build?: { readonly commit: string; readonly modified: boolean } | undefined;
  readonly targets: readonly { readonly target: string; readonly measured: string; readonly holds: boolean }[];
}

export interface TargetTally {
  readonly target: string;
  readonly runs: number;
  readonly held: number;
  /** The figures each run measured (the first number of its `measured` text), least to most. */
  readonly figures: readonly number[];
  /** The most decimals a figure was written with: the table writes them all so ("1.00", not "1"). */
  readonly decimals: number;
}

/** Per target, in the order targets first appear: in how many runs it was checked, in how many it held, and its figures. */
export function tallyTargets(runs: readonly RecordedRun[]): TargetTally[] {
  const byTarget = new Map<string, { runs: number; held: number; figures: number[]; decimals: number }>();
  for (const run of runs) {
    for (const check of run.targets) {
      let tally = byTarget.get(check.target);
      if (tally === undefined) byTarget.set(check.target, (tally = { runs: 0, held: 0, figures: [], decimals: 0 }));
      tally.runs += 1;
      if (check.holds) tally.held += 1;
      const figure = firstNumberText(check.measured);
      if (figure !== undefined) {
        tally.figures.push(Number(figure));
        const point = figure.indexOf('.');
        tally.decimals = Math.max(tally.decimals, point === -1 ? 0 : figure.length - point - 1);
      }
    }
  }
  return [...byTarget].map(([target, tally]) => ({ ...tally, target, figures: tally.figures.sort((a, b) => a - b) }));
}

/** The first number written in a measured figure, as written: "0.84", "0.77 × one", "worst 12.99 ms (…)". */
export function firstNumberText(text: string): string | undefined {
  return /-?\d+(?:\.\d+)?/.exec(text)?.[0];
}

/** The runs to tally: full runs from `since` on (an ISO date, or everything when undefined), quick ones only if asked. */
export function selectRuns(runs: readonly RecordedRun[], since: string | undefined, quickToo: boolean): RecordedRun[] {
  const from = since === undefined ? -Infinity : Date.parse(since);
  if (Number.isNaN(from)) throw new Error(`--since ${since}: not a date (give an ISO date such as 2026-11-24T13:00Z)`);
  return runs.filter((run) => (quickToo || !run.quick) && Date.parse(run.date) >= from).sort((a, b) => Date.parse(a.date) - Date.parse(b.date));
}

export function renderHistory(runs: readonly RecordedRun[]): string {
  if (runs.length === 0) return 'No recorded runs to tally.\n';
  const builds = [...new Set(runs.map((run) => (run.build === undefined ? 'not recorded' : run.build.commit + (run.build.modified ? '+' : ''))))];
  const lines = [
    `${runs.length} runs, ${runs[0]?.date} to ${runs[runs.length - 1]?.date}; builds: ${builds.join(', ')}` +
      `${builds.some((build) => build.endsWith('+')) ? ' (+: with uncommitted changes)' : ''}.`,
    'A target is counted in the runs that checked it; its figures are those runs\' measured values.',
    '',
    '| Target | Runs | Held | Least | Median | Most |',
    '|---|---:|---:|---:|---:|---:|',
  ];
  for (const tally of tallyTargets(runs)) {
    const { figures, decimals } = tally;
    const show = (value: number | undefined): string => (value === undefined ? '–' : value.toFixed(decimals));
    lines.push(`| ${tally.target} | ${tally.runs} | ${tally.held} | ${show(figures[0])} | ${show(median(figures))} | ${show(figures[figures.length - 1])} |`);
  }
  return `${lines.join('\n')}\n`;
}

function median(sorted: readonly number[]): number | undefined {
  if (sorted.length === 0) return undefined;
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}
