// The report as a person reads it in a terminal or a CI log: the targets, what was taken for
// noise, the requests by route, then each differing request with the paths that differ and both
// values, and the verdict last. Values are written as JSON (strings quoted and escaped), so that
// nothing an answer holds can steer a terminal; each is cut at VALUE_SHOWN_MAX characters, and
// only the first REQUESTS_SHOWN_MAX differing requests are written out.
import { stringify } from 'lossless-json';
import type { FieldDifference } from './compare.js';
import type { MigrationReport, ReportedRequest, RouteCount } from './report.js';

const VALUE_SHOWN_MAX = 160;
const REQUESTS_SHOWN_MAX = 50;

/** A value as JSON writes it, cut to a line. */
export function shownValue(value: unknown): string {
  const text = stringify(value) ?? 'null';
  return text.length > VALUE_SHOWN_MAX ? `${text.slice(0, VALUE_SHOWN_MAX - 1)}…` : text;
}

/** Text with its control characters escaped, for what the kit could not check itself (an unsent request's URL). */
export const printable = (text: string): string =>
  text.replace(
    /[\u0000-\u001f\u007f-\u009f]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );

const side = (difference: FieldDifference, key: 'primary' | 'candidate'): string =>
  key in difference ? shownValue(difference[key]) : '(absent)';

function table(routes: readonly RouteCount[]): string[] {
  const width = Math.max(5, ...routes.map((route) => route.route.length));
  const row = (cells: readonly (string | number)[]): string =>
    cells
      .map((cell, at) => (at === 0 ? String(cell).padEnd(width + 2) : String(cell).padStart(9)))
      .join('')
      .trimEnd();
  return [
    row(['route', 'requests', 'equal', 'noise', 'differ']),
    ...routes.map((r) => row([r.route, r.requests, r.equal, r.noiseOnly, r.differ])),
  ];
}

function noiseLines(report: MigrationReport): string[] {
  const { noise } = report;
  if (noise.learnedFrom === 'rules')
    return [
      'noise: no secondary, so the kit falls back on these rules:',
      ...noise.rules.map((rule) => `  ${rule.name}: ${rule.says}`),
    ];
  const learned = Object.entries(noise.learned);
  return [
    learned.length === 0
      ? 'noise: learned from the secondary; it answered every request as the primary did'
      : 'noise: learned from the secondary, by route:',
    ...learned.map(([route, paths]) => `  ${route}: ${paths.join(', ')}`),
    ...(noise.bounded === null ? [] : [`  ${noise.bounded}`]),
  ];
}

function requestLines(one: ReportedRequest): string[] {
  const head = `#${one.index} ${one.method} ${one.target} (route ${one.route})`;
  if (one.fields === undefined || one.primary === undefined || one.candidate === undefined)
    return [`${head}: differs at ${one.paths.join(', ')} (answers not kept: past the bound)`];
  const lines = [`${head}: primary ${one.primary.status}, candidate ${one.candidate.status}`];
  for (const field of one.fields) {
    const note = field.pydantic === undefined ? '' : `  [pydantic 2 wording: ${field.pydantic}]`;
    lines.push(
      `  ${field.path}: primary ${side(field, 'primary')}, candidate ${side(field, 'candidate')}${note}`,
    );
  }
  return lines;
}

export function textReport(report: MigrationReport): string {
  const { summary } = report;
  const lines = [
    `primary    ${report.targets.primary}`,
    `secondary  ${report.targets.secondary ?? '(none)'}`,
    `candidate  ${report.targets.candidate}`,
    ...noiseLines(report),
    `replayed ${summary.sent} of ${summary.requests} requests: ${summary.equal} equal, ${summary.noiseOnly} noise only, ${summary.differ} differ`,
  ];
  if (report.routes.length > 0) lines.push('', ...table(report.routes));
  const shown = report.differences.slice(0, REQUESTS_SHOWN_MAX);
  if (shown.length > 0) lines.push('', ...shown.flatMap(requestLines));
  const hidden = report.differences.length - shown.length;
  if (hidden > 0)
    lines.push(`… and ${hidden} more differing requests in the JSON and HTML reports`);
  if (report.unsent.length > 0) {
    lines.push('', 'not sent:');
    for (const one of report.unsent)
      lines.push(
        `  #${one.index} ${printable(`${one.method} ${one.url}`)}: ${printable(one.reason)}`,
      );
  }
  const pydantic = report.differences.filter((one) => one.pydanticWordingOnly).length;
  if (pydantic > 0)
    lines.push(
      '',
      `${pydantic} of the differing requests differ only in pydantic 2's wording of the same 422 errors (docs/migration.md, "Reading 422 differences")`,
    );
  lines.push('', `verdict: ${report.verdict} (exit ${report.exitCode})`);
  return `${lines.join('\n')}\n`;
}
