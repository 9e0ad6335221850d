// Where the instructions of a request go, function by function: the exclusive (self) cost of each
// function in a callgrind dump, summed over the process's threads, and grouped by whose code it
// is. Compiled JavaScript has no symbols valgrind can read; node lists it (--perf-basic-prof) with
// each function's name and script, which names it here. What stays unnamed is JavaScript compiled
// after the list was copied, or code V8 generated without listing it.
import { readFileSync } from 'node:fs';

export type Group =
  | 'ours (src/)'
  | 'our libraries (node_modules)'
  | 'bench server (bench/)'
  | 'node:http and node JS'
  | 'node C++ (http parser, streams)'
  | 'V8 (builtins, interpreter, GC, compiler)'
  | 'libuv'
  | 'SQLite (better-sqlite3)'
  | 'libc, libstdc++'
  | 'compiled JS, unnamed'
  | 'other';

export type ThreadRole =
  'main thread' | 'SQLite writer thread' | "other threads (V8's helpers, libuv's pool)";

export interface FunctionCosts {
  /** Instructions per request by function (its label, as callgrind or node's list names it). */
  readonly functions: ReadonlyMap<string, { readonly group: Group; readonly cost: number }>;
  /** Instructions per request by thread: the first dump file is the main thread's; a later one with SQLite's code in it, the writer's. */
  readonly threads: ReadonlyMap<ThreadRole, number>;
}

interface PerfEntry {
  readonly start: number;
  readonly end: number;
  readonly name: string;
}

/** The functions of a dump's files (one per thread), each cost divided by `requests`. */
export function functionCosts(
  files: readonly string[],
  perfMap: string | undefined,
  requests: number,
): FunctionCosts {
  const entries = perfMap === undefined ? [] : readPerfMap(readFileSync(perfMap, 'utf8'));
  const costs = new Map<string, { group: Group; cost: number }>();
  const threads = new Map<ThreadRole, number>();
  files.forEach((file, i) => {
    let total = 0;
    let sqlite = false;
    for (const [key, cost] of selfCosts(readFileSync(file, 'utf8'))) {
      const [object, fn] = key.split('\0') as [string, string];
      const { label, group } = classify(object, fn, entries);
      const entry = costs.get(label) ?? { group, cost: 0 };
      entry.cost += cost / requests;
      costs.set(label, entry);
      total += cost / requests;
      sqlite ||= group === 'SQLite (better-sqlite3)';
    }
    const role: ThreadRole =
      i === 0
        ? 'main thread'
        : sqlite
          ? 'SQLite writer thread'
          : "other threads (V8's helpers, libuv's pool)";
    threads.set(role, (threads.get(role) ?? 0) + total);
  });
  return { functions: costs, threads };
}

/**
 * Exclusive cost per object and function of one callgrind file (the format callgrind writes, with
 * its name compression): every cost line counts for the function it is under, except the line
 * after `calls=`, which is the inclusive cost of a call.
 */
export function selfCosts(text: string): Map<string, number> {
  const objects = new Map<string, string>();
  const functions = new Map<string, string>();
  const resolve = (table: Map<string, string>, value: string): string => {
    const match = /^\((\d+)\)(?: (.*))?$/.exec(value);
    if (match === null) return value;
    if (match[2] !== undefined) table.set(match[1] as string, match[2]);
    return table.get(match[1] as string) ?? value;
  };
  let positions = 1;
  let object = '';
  let fn = '';
  let skip = false;
  const costs = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (skip) {
      skip = false;
      continue;
    }
    const c = line.charCodeAt(0);
    if ((c >= 48 && c <= 57) || c === 43 || c === 45 || c === 42) {
      const fields = line.split(' ');
      const cost = Number(fields[positions] ?? 0);
      if (cost > 0) {
        const key = `${object}\0${fn}`;
        costs.set(key, (costs.get(key) ?? 0) + cost);
      }
    } else if (line.startsWith('fn=')) fn = resolve(functions, line.slice(3));
    else if (line.startsWith('ob=')) object = resolve(objects, line.slice(3));
    else if (line.startsWith('cfn=')) resolve(functions, line.slice(4));
    else if (line.startsWith('cob=')) resolve(objects, line.slice(4));
    else if (line.startsWith('calls=')) skip = true;
    else if (line.startsWith('positions:'))
      positions = line.slice('positions:'.length).trim().split(/\s+/).length;
  }
  return costs;
}

/** node's --perf-basic-prof list: `start size name` in hex, later lines for reused addresses last. */
export function readPerfMap(text: string): PerfEntry[] {
  const byStart = new Map<number, PerfEntry>();
  for (const line of text.split('\n')) {
    const match = /^([0-9a-f]+) ([0-9a-f]+) (.*)$/.exec(line);
    if (match === null) continue;
    const start = parseInt(match[1] as string, 16);
    byStart.set(start, {
      start,
      end: start + parseInt(match[2] as string, 16),
      name: match[3] as string,
    });
  }
  return [...byStart.values()].sort((a, b) => a.start - b.start);
}

function lookUp(entries: readonly PerfEntry[], address: number): PerfEntry | undefined {
  let low = 0;
  let high = entries.length - 1;
  while (low <= high) {
    const middle = (low + high) >> 1;
    const entry = entries[middle] as PerfEntry;
    if (address < entry.start) high = middle - 1;
    else if (address >= entry.end) low = middle + 1;
    else return entry;
  }
  return undefined;
}

export function classify(
  object: string,
  fn: string,
  entries: readonly PerfEntry[],
): { label: string; group: Group } {
  if (/^0x[0-9a-f]+$/.test(fn)) {
    const entry = lookUp(entries, parseInt(fn, 16));
    if (entry === undefined)
      return { label: 'compiled JS, unnamed', group: 'compiled JS, unnamed' };
    return classifyListed(entry.name);
  }
  const name = fn.split('(')[0] as string;
  if (object.endsWith('better_sqlite3.node'))
    return { label: fn, group: 'SQLite (better-sqlite3)' };
  if (
    /^(libc|libstdc\+\+|libm|libgcc_s|ld-linux[^/]*)\.so/.test(
      object.slice(object.lastIndexOf('/') + 1),
    )
  ) {
    return { label: fn, group: 'libc, libstdc++' };
  }
  if (/^uv_|^uv__/.test(name)) return { label: fn, group: 'libuv' };
  if (/^Builtins_|v8::|^cppgc::|heap::base::/.test(name))
    return { label: fn, group: 'V8 (builtins, interpreter, GC, compiler)' };
  if (/node::|^llhttp|^napi_/.test(name))
    return { label: fn, group: 'node C++ (http parser, streams)' };
  return { label: fn, group: 'other' };
}

/** A function node listed: `JS:*name script:line:col`, `Builtin:Name`, `BytecodeHandler:…`, … */
function classifyListed(listed: string): { label: string; group: Group } {
  const kind = listed.slice(0, listed.indexOf(':'));
  // Code V8 generated for a regular expression, named by its source: whose it is, the name tells.
  if (kind === 'RegExp')
    return {
      label: `RegExp /${listed.slice(kind.length + 1)}/`,
      group: 'V8 (builtins, interpreter, GC, compiler)',
    };
  if (kind !== 'JS' && kind !== 'Eval' && kind !== 'Script')
    return {
      label: `Builtins_${listed.slice(kind.length + 1)}`,
      group: 'V8 (builtins, interpreter, GC, compiler)',
    };
  // The tier marker (~ interpreted, ^ baseline, + Maglev, * TurboFan) goes: one function, one line.
  const label = listed.slice(kind.length + 1).replace(/^[~^+*]/, '');
  const script = label.slice(label.lastIndexOf(' ') + 1);
  if (script.startsWith('node:')) return { label, group: 'node:http and node JS' };
  if (script.includes('/node_modules/'))
    return { label: shorten(label), group: 'our libraries (node_modules)' };
  if (script.includes('/bench/')) return { label: shorten(label), group: 'bench server (bench/)' };
  if (script.includes('/src/')) return { label: shorten(label), group: 'ours (src/)' };
  return { label: shorten(label), group: 'other' };
}

/** A script's path from the project's folders on: the table names no folder of the machine. */
function shorten(label: string): string {
  return label
    .replace(/ (?:file:\/\/)?\S*?\/((?:src|bench|node_modules)\/\S*)$/, ' $1')
    .replace(/\/\.build\//, '/');
}

export interface BreakdownRow {
  readonly name: string;
  /** A missed target, or a ruler (informational row): broken down; a met target is not. */
  readonly shown: boolean;
  readonly referenceLabel: string;
  readonly ours: FunctionCosts | undefined;
  readonly reference: FunctionCosts | undefined;
}

const TOP = 15;
const k = (n: number): string => `${(n / 1000).toFixed(2)}k`;
const signed = (n: number): string => `${n >= 0 ? '+' : '−'}${k(Math.abs(n))}`;

/** For each missed target and ruler: instructions per request by group and by thread, and the functions that differ most from the reference. */
export function renderBreakdown(rows: readonly BreakdownRow[]): string {
  const lines = ['', '## Where the instructions go, for each missed target and ruler', ''];
  lines.push(
    "Exclusive (self) instructions per request, every thread, from the least round's dump; compiled JavaScript named from node's --perf-basic-prof list. " +
      "A JavaScript function interpreted rather than compiled runs in V8's bytecode handlers, and is counted there.",
    '',
  );
  for (const row of rows) {
    if (!row.shown || row.ours === undefined || row.reference === undefined) continue;
    const ours = row.ours;
    const reference = row.reference;
    lines.push(
      `### ${row.name}`,
      '',
      `| Group | ${row.referenceLabel} | ours | difference |`,
      '|---|---:|---:|---:|',
    );
    const groups = new Map<Group, { ours: number; reference: number }>();
    for (const [costs, side] of [
      [ours.functions, 'ours'],
      [reference.functions, 'reference'],
    ] as const) {
      for (const { group, cost } of costs.values()) {
        const entry = groups.get(group) ?? { ours: 0, reference: 0 };
        entry[side] += cost;
        groups.set(group, entry);
      }
    }
    const sum = { ours: 0, reference: 0 };
    for (const [group, g] of [...groups].sort(
      (a, b) => b[1].ours - b[1].reference - (a[1].ours - a[1].reference),
    )) {
      lines.push(
        `| ${group} | ${k(g.reference)} | ${k(g.ours)} | ${signed(g.ours - g.reference)} |`,
      );
      sum.ours += g.ours;
      sum.reference += g.reference;
    }
    lines.push(
      `| all | ${k(sum.reference)} | ${k(sum.ours)} | ${signed(sum.ours - sum.reference)} |`,
      '',
    );
    lines.push(`| Thread | ${row.referenceLabel} | ours | difference |`, '|---|---:|---:|---:|');
    for (const role of [
      'main thread',
      'SQLite writer thread',
      "other threads (V8's helpers, libuv's pool)",
    ] as const) {
      const o = ours.threads.get(role) ?? 0;
      const r = reference.threads.get(role) ?? 0;
      if (o !== 0 || r !== 0) lines.push(`| ${role} | ${k(r)} | ${k(o)} | ${signed(o - r)} |`);
    }
    lines.push('');
    const labels = new Set([...ours.functions.keys(), ...reference.functions.keys()]);
    const differences = [...labels].map((label) => {
      const o = ours.functions.get(label);
      const r = reference.functions.get(label);
      return {
        label,
        group: (o ?? r)?.group as Group,
        ours: o?.cost ?? 0,
        reference: r?.cost ?? 0,
      };
    });
    differences.sort((a, b) => b.ours - b.reference - (a.ours - a.reference));
    lines.push(
      `The ${TOP} functions that cost most over the ${row.referenceLabel} server:`,
      '',
      `| Function | Group | ${row.referenceLabel} | ours | difference |`,
      '|---|---|---:|---:|---:|',
    );
    for (const d of differences.slice(0, TOP)) {
      lines.push(
        `| \`${d.label.replace(/\|/g, '\\|').slice(0, 110)}\` | ${d.group} | ${k(d.reference)} | ${k(d.ours)} | ${signed(d.ours - d.reference)} |`,
      );
    }
    lines.push('');
  }
  return `${lines.join('\n')}\n`;
}
