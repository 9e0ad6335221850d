// One scenario from start to end: check that every server gives the baseline's answer, measure
// them all in alternating rounds, and turn the figures into table rows with their ratios.
import { answersDiffer, sendOnce } from './answers.js';
import { FRESH_KEY } from './load.js';
import type { Row, ScenarioResult } from './results.js';
import { measureSubjects, medianRatio, type RoundPlan, type Subject } from './rounds.js';
import type { Scenario } from './scenarios.js';

export interface Participant {
  readonly kind: Row['kind'];
  readonly subject: Subject;
}

export async function runScenario(
  part: ScenarioResult['part'],
  scenario: Scenario,
  participants: readonly Participant[],
  plan: RoundPlan,
): Promise<ScenarioResult> {
  const baseline = participants.find((p) => p.kind === 'baseline');
  if (baseline === undefined) throw new Error(`${scenario.name}: no baseline`);
  const baselineUrl = (baseline.subject.servers[0] as { url: string }).url;
  let answerMismatch: string | undefined;
  for (const p of participants) {
    if (p === baseline) continue;
    for (const server of p.subject.servers) {
      const [mine, theirs] = await Promise.all([sendOnce(server.url, scenario.request), sendOnce(baselineUrl, scenario.request)]);
      answerMismatch ??= answersDiffer(mine, theirs, scenario.expectedStatus, scenario.bodyCheck);
      // A fixed key: that request recorded its answer. Sent once more, it is a retry, whose answer a
      // service keeps in memory: the rounds then measure replays, not the first lookup (during which
      // the service answers 409 to the same key, as while a request with it is running).
      const key = scenario.request.idempotencyKey;
      if (key !== undefined && key !== FRESH_KEY) await sendOnce(server.url, scenario.request);
    }
  }
  const measured = await measureSubjects(
    scenario.request,
    scenario.expectedStatus,
    participants.map((p) => p.subject),
    plan,
  );
  const baselineResult = measured[participants.indexOf(baseline)];
  if (baselineResult === undefined) throw new Error('baseline not measured');
  const rows = measured.map(
    (result, i): Row => ({
      ...result,
      kind: (participants[i] as Participant).kind,
      baselineRatio: medianRatio(result, baselineResult),
      cpuRatio:
        result.cpu_us_per_response === undefined || baselineResult.cpu_us_per_response === undefined
          ? undefined
          : baselineResult.cpu_us_per_response / result.cpu_us_per_response,
      ok: answerMismatch === undefined && result.wrongStatus === 0 && result.errors === 0,
    }),
  );
  return { part, name: scenario.name, expectedStatus: scenario.expectedStatus, answerMismatch, rows };
}
