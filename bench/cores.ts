// Which cores a process may run on, and how busy each core was: the server-bound part pins each
// server to one core and wrk to another (taskset), and reads /proc/stat to show how busy wrk's was.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** Pins every thread of a process (and the threads it starts later) to these cores, as taskset lists them. */
export async function pin(pid: number, cores: string): Promise<void> {
  await run('taskset', ['-a', '-p', '-c', cores, String(pid)]);
}

/** The cores a process may run on, as taskset lists them: "0,1", "0-3" or "0-1,4". */
export async function coresOf(pid: number): Promise<string> {
  const { stdout } = await run('taskset', ['-c', '-p', String(pid)]);
  const list = /affinity list:\s*(\S+)/.exec(stdout)?.[1];
  if (list === undefined) throw new Error(`taskset printed no affinity list: ${stdout}`);
  return list;
}

/** The cores of a taskset list such as "0,1", "0-3" or "0-1,4". */
export function coreNumbers(list: string): Set<number> {
  if (!/^\d+(-\d+)?(,\d+(-\d+)?)*$/.test(list)) throw new Error(`not a list of cores: ${list}`);
  const cores = new Set<number>();
  for (const part of list.split(',')) {
    const [from, to = from] = part.split('-').map(Number) as [number, number?];
    if (to < from) throw new Error(`not a list of cores: ${list}`);
    for (let core = from; core <= to; core++) cores.add(core);
  }
  return cores;
}

/** Per core, clock ticks so far: busy, and all that count (busy, idle, waiting for I/O, stolen by the host). */
export type CoreTimes = ReadonlyMap<number, { readonly busy: number; readonly all: number }>;

export function readCoreTimes(): CoreTimes {
  return parseCoreTimes(readFileSync('/proc/stat', 'utf8'));
}

/**
 * /proc/stat's `cpuN` lines: user, nice, system, idle, iowait, irq, softirq, steal, guest,
 * guest_nice. Busy is user, nice, system, irq and softirq; time stolen by the hypervisor is not
 * busy (the core did not run this machine's work), and guest time is already inside user and nice.
 */
export function parseCoreTimes(stat: string): CoreTimes {
  const times = new Map<number, { busy: number; all: number }>();
  for (const line of stat.split('\n')) {
    const match = /^cpu(\d+) (.*)$/.exec(line);
    if (match === null) continue;
    const [user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0] = (match[2] as string).trim().split(/\s+/).map(Number);
    const busy = user + nice + system + irq + softirq;
    times.set(Number(match[1]), { busy, all: busy + idle + iowait + steal });
  }
  return times;
}

/** The busy share (0–1) of one core between two readings; undefined when no tick passed. */
export function busyShare(before: CoreTimes, after: CoreTimes, core: number): number | undefined {
  const from = before.get(core);
  const to = after.get(core);
  if (from === undefined || to === undefined || to.all === from.all) return undefined;
  return (to.busy - from.busy) / (to.all - from.all);
}
