/**
 * CPU time another process (or one of its threads) has used, read from /proc (Linux only):
 * user + system time, for CPU per generated token of a server process the bench started.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';

/** Clock ticks per second of /proc's times (`getconf CLK_TCK`; 100 on every common Linux). */
const TICKS_PER_SECOND = (() => {
  try {
    const ticks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
    return Number.isFinite(ticks) && ticks > 0 ? ticks : 100;
  } catch {
    return 100;
  }
})();

/** utime + stime in ms from a stat line: fields 14 and 15, counted after the `(comm)` that may hold spaces. */
function statCpuMs(path: string): number {
  const stat = readFileSync(path, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // fields[0] is field 3 (state): utime is field 14, stime field 15.
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND;
}

/** The process's CPU time in ms, all its threads, or undefined where /proc cannot be read. */
export function processCpuMs(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    return statCpuMs(`/proc/${pid}/stat`);
  } catch {
    return undefined;
  }
}

/** The CPU time in ms of the process's main thread (the event loop of a Node process). */
export function mainThreadCpuMs(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    return statCpuMs(`/proc/${pid}/task/${pid}/stat`);
  } catch {
    return undefined;
  }
}

/**
 * The CPU time in ms of a process and every process below it (a daemon and its extraction
 * child), summed over /proc's current processes: a child that has exited counts no more.
 */
export function processTreeCpuMs(pid: number): number {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue;
    }
    // Field 4, the parent's pid, after the `(comm)` that may hold spaces.
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    const list = children.get(ppid) ?? [];
    list.push(Number(entry));
    children.set(ppid, list);
  }
  let total = 0;
  const stack = [pid];
  while (stack.length > 0) {
    const next = stack.pop()!;
    total += processCpuMs(next) ?? 0;
    stack.push(...(children.get(next) ?? []));
  }
  return total;
}
