// The report as a page a person opens in a browser: one self-contained file (its style inline, no
// script, nothing fetched: its Content-Security-Policy forbids it), every text drawn from a
// recorded request or answer escaped, so that a hostile body shows as text and runs nothing.
import type { FieldDifference } from './compare.js';
import type { MigrationReport, ReportedRequest } from './report.js';
import type { ShownAnswer, ShownBody, ShownRequest } from './shown.js';
import { shownValue } from './text-report.js';

const ESCAPES: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** Text as HTML shows it, in an element or an attribute. */
export const escapeHtml = (text: string): string =>
  text.replace(/[&<>"']/g, (c) => ESCAPES[c] ?? c);

const STYLE = `
body { font: 14px/1.45 system-ui, sans-serif; margin: 2rem; color: #1b1b1b; }
h1 { font-size: 1.4rem; } h2 { font-size: 1.15rem; margin-top: 2rem; }
table { border-collapse: collapse; } td, th { border: 1px solid #ccc; padding: 0.2rem 0.6rem; text-align: left; vertical-align: top; }
td.n { text-align: right; } .bad { color: #a40000; font-weight: 600; } .ok { color: #00641e; font-weight: 600; }
pre { background: #f5f5f5; padding: 0.5rem; white-space: pre-wrap; word-break: break-all; margin: 0.2rem 0; }
details { border: 1px solid #ddd; margin: 0.5rem 0; padding: 0.4rem 0.6rem; } summary { cursor: pointer; }
.answers { display: grid; grid-template-columns: 1fr 1fr; gap: 1rem; } .note { color: #555; }
`;

function body(shown: ShownBody | undefined): string {
  if (shown === undefined || shown.bytes === 0) return '<p class="note">no body</p>';
  const how = [
    `${shown.bytes} bytes`,
    shown.base64 === true ? 'base64' : '',
    shown.cut === true ? 'cut' : '',
  ].filter(Boolean);
  return `<p class="note">${escapeHtml(how.join(', '))}</p><pre>${escapeHtml(shown.text)}</pre>`;
}

function request(shown: ShownRequest): string {
  const headers = shown.headers.map((h) => `${h.name}: ${h.value}`).join('\n');
  return `<h4>Request</h4><pre>${escapeHtml(`${shown.method} ${shown.target}\n${headers}`)}</pre>${body(shown.body)}`;
}

function answer(title: string, shown: ShownAnswer): string {
  const headers = Object.entries(shown.headers).map(([name, value]) => `${name}: ${value}`);
  return `<div><h4>${escapeHtml(title)}</h4><pre>${escapeHtml([`status ${shown.status}`, ...headers].join('\n'))}</pre>${body(shown.body)}</div>`;
}

const cell = (difference: FieldDifference, key: 'primary' | 'candidate'): string =>
  key in difference ? `<code>${escapeHtml(shownValue(difference[key]))}</code>` : '<i>absent</i>';

function fields(list: readonly FieldDifference[]): string {
  const rows = list.map(
    (field) =>
      `<tr><td><code>${escapeHtml(field.path)}</code></td><td>${cell(field, 'primary')}</td><td>${cell(field, 'candidate')}</td><td>${escapeHtml(field.pydantic === undefined ? '' : `pydantic 2 wording: ${field.pydantic}`)}</td></tr>`,
  );
  return `<table><tr><th>path</th><th>primary</th><th>candidate</th><th>note</th></tr>${rows.join('')}</table>`;
}

/** The first few differing requests are shown open; the rest open on a click. */
const SHOWN_OPEN = 20;

function differing(one: ReportedRequest, at: number): string {
  const head = `#${one.index} ${one.method} ${one.target}`;
  const wording = one.pydanticWordingOnly ? ' (pydantic 2 wording only)' : '';
  const summary = `<summary><b>${escapeHtml(head)}</b> <span class="note">${escapeHtml(`route ${one.route}${wording}: ${one.paths.join(', ')}`)}</span></summary>`;
  const open = at < SHOWN_OPEN ? ' open' : '';
  if (one.request === undefined || one.primary === undefined || one.candidate === undefined)
    return `<details${open}>${summary}<p class="note">The answers were not kept (past the report's bound).</p></details>`;
  const noise =
    one.noise === undefined || one.noise.length === 0
      ? ''
      : `<p class="note">Also differed, as noise: ${escapeHtml(one.noise.map((n) => `${n.path} (${n.by})`).join(', '))}</p>`;
  return `<details${open}>${summary}${fields(one.fields ?? [])}${noise}${request(one.request)}<div class="answers">${answer('Primary', one.primary)}${answer('Candidate', one.candidate)}</div></details>`;
}

function noiseSection(report: MigrationReport): string {
  const { noise } = report;
  const items =
    noise.learnedFrom === 'rules'
      ? noise.rules.map(
          (rule) => `<li><b>${escapeHtml(rule.name)}</b>: ${escapeHtml(rule.says)}</li>`,
        )
      : Object.entries(noise.learned).map(
          ([route, paths]) => `<li>${escapeHtml(`${route}: ${paths.join(', ')}`)}</li>`,
        );
  const intro =
    noise.learnedFrom === 'rules'
      ? 'No secondary: the kit fell back on these rules.'
      : 'Learned from the secondary: what differed between primary and secondary, by route.';
  return `<h2>Noise</h2><p>${escapeHtml(intro)}</p><ul>${items.join('') || '<li>none</li>'}</ul><p class="note">${escapeHtml(noise.notCompared)}</p>`;
}

function routesSection(report: MigrationReport): string {
  const rows = report.routes.map(
    (r) =>
      `<tr><td><code>${escapeHtml(r.route)}</code></td><td class="n">${r.requests}</td><td class="n">${r.equal}</td><td class="n">${r.noiseOnly}</td><td class="n${r.differ > 0 ? ' bad' : ''}">${r.differ}</td></tr>`,
  );
  return `<h2>Routes</h2><table><tr><th>route</th><th>requests</th><th>equal</th><th>noise only</th><th>differ</th></tr>${rows.join('')}</table>`;
}

function unsentSection(report: MigrationReport): string {
  if (report.unsent.length === 0) return '';
  const items = report.unsent.map(
    (one) => `<li>${escapeHtml(`#${one.index} ${one.method} ${one.url}: ${one.reason}`)}</li>`,
  );
  return `<h2>Not sent</h2><ul>${items.join('')}</ul>`;
}

export function htmlReport(report: MigrationReport): string {
  const verdictClass = report.exitCode === 0 ? 'ok' : 'bad';
  const targets = (['primary', 'secondary', 'candidate'] as const)
    .map((name) => `<li>${name}: <code>${escapeHtml(report.targets[name] ?? '(none)')}</code></li>`)
    .join('');
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<title>Migration diff: ${escapeHtml(report.har)}</title><style>${STYLE}</style></head><body>
<h1>Migration diff of ${escapeHtml(report.har)}</h1>
<p class="${verdictClass}">${escapeHtml(`${report.verdict} (exit ${report.exitCode})`)}</p>
<ul>${targets}</ul>
${routesSection(report)}
<h2>Differences</h2>${report.differences.map(differing).join('\n') || '<p>None beyond noise.</p>'}
${unsentSection(report)}
${noiseSection(report)}
</body></html>
`;
}
