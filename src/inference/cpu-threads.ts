import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';

/**
 * How many CPU threads llama.cpp gets when the user does not say (`--threads`).
 *
 * node-llama-cpp's own default on a CPU is max(4, physical cores): on a 2-core machine that is
 * 4 threads, and llama.cpp's threads spin while they wait for each other, so when anything else
 * runs (a test suite, a browser, a second model) they fight for the cores and a 16-token reply
 * took 15–60 s instead of 14–650 ms (docs/BENCHMARKS.md, "Threads under load"). One thread
 * per physical core but one leaves a core for the daemon's own event loop and for whatever else
 * the machine runs, and degrades to 1 thread on 1–2 cores, where spinning threads hurt most.
 */
export function defaultThreads(cores: CpuCores = cpuCores()): number {
  return Math.max(1, cores.usable - 1);
}

export interface CpuCores {
  /** Physical cores this process may run on, after affinity and any cgroup CPU quota. */
  usable: number;
  /** Where `usable` came from (the threads bench prints it). */
  source: 'topology' | 'available-parallelism';
  /** The cgroup CPU quota in cores (rounded up), when one applies. */
  quota?: number;
}

/** Reads a file as text, or undefined when it is not there (tests pass a fake file system). */
export type ReadText = (path: string) => string | undefined;

const readText: ReadText = (path) => {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
};

/** `0-3,8,10-11` → [0, 1, 2, 3, 8, 10, 11]; undefined when the text is not such a list. */
export function parseCpuList(text: string): number[] | undefined {
  const cpus: number[] = [];
  for (const part of text.trim().split(',')) {
    const match = /^(\d+)(?:-(\d+))?$/.exec(part.trim());
    if (match === null) return undefined;
    const from = Number(match[1]);
    const to = match[2] === undefined ? from : Number(match[2]);
    if (to < from || to - from > 65_536) return undefined;
    for (let cpu = from; cpu <= to; cpu++) cpus.push(cpu);
  }
  return cpus;
}

/** `/a/b` → ['/a/b', '/a', ''] (a cgroup and its ancestors, as paths under the mount). */
function cgroupAncestors(path: string): string[] {
  const parts = path.split('/').filter((p) => p !== '');
  return Array.from({ length: parts.length + 1 }, (_, i) => {
    const dir = parts.slice(0, parts.length - i).join('/');
    return dir === '' ? '' : `/${dir}`;
  });
}

/**
 * The cgroup CPU quota of this process in whole cores (rounded up), or undefined when there is
 * none: cgroup v2 `cpu.max` ("150000 100000" = 1.5 cores → 2), or v1 `cpu.cfs_quota_us` over
 * `cpu.cfs_period_us`, the smallest along the process's cgroup and its ancestors (a quota may sit
 * on a parent slice). Containers started with `--cpus` see every host core but may use only this.
 */
export function cgroupQuota(read: ReadText = readText): number | undefined {
  const lines = (read('/proc/self/cgroup') ?? '').split('\n');
  const cores = (quota: number, period: number): number | undefined =>
    Number.isFinite(quota) && Number.isFinite(period) && quota > 0 && period > 0 ? Math.max(1, Math.ceil(quota / period)) : undefined;
  const quotas: number[] = [];
  const v2 = lines.find((l) => l.startsWith('0::'))?.slice(3).trim();
  if (v2 !== undefined) {
    for (const dir of cgroupAncestors(v2)) {
      const max = read(`/sys/fs/cgroup${dir}/cpu.max`)?.trim().split(/\s+/);
      if (max === undefined || max[0] === 'max') continue;
      const quota = cores(Number(max[0]), Number(max[1] ?? 100_000));
      if (quota !== undefined) quotas.push(quota);
    }
  }
  const v1 = lines.map((l) => l.split(':')).find((f) => f[1]?.split(',').includes('cpu'));
  if (v1 !== undefined) {
    for (const mount of ['/sys/fs/cgroup/cpu', '/sys/fs/cgroup/cpu,cpuacct']) {
      for (const dir of cgroupAncestors(v1.slice(2).join(':').trim())) {
        const quota = read(`${mount}${dir}/cpu.cfs_quota_us`);
        if (quota === undefined) continue;
        const limit = cores(Number(quota.trim()), Number(read(`${mount}${dir}/cpu.cfs_period_us`)?.trim() ?? 100_000));
        if (limit !== undefined) quotas.push(limit);
      }
    }
  }
  return quotas.length === 0 ? undefined : Math.min(...quotas);
}

/**
 * Physical cores this process may use. On Linux: the CPUs in its affinity mask
 * (`/proc/self/status` Cpus_allowed_list) that are online, grouped into cores by their SMT siblings
 * (`/sys/devices/system/cpu/cpuN/topology/core_cpus_list`, or `thread_siblings_list` on older
 * kernels, as llama.cpp itself counts), capped by the cgroup CPU quota. Elsewhere, or when
 * those files are missing: `os.availableParallelism()`, which counts logical CPUs.
 */
export function cpuCores(read: ReadText = readText, parallelism: () => number = availableParallelism): CpuCores {
  const quota = cgroupQuota(read);
  const capped = (usable: number, source: CpuCores['source']): CpuCores =>
    quota === undefined ? { usable, source } : { usable: Math.min(usable, quota), source, quota };
  const allowedLine = (read('/proc/self/status') ?? '').split('\n').find((l) => l.startsWith('Cpus_allowed_list:'));
  // The mask may name CPUs that are not present (a mask of 0-255 on a 2-CPU machine).
  const online = parseCpuList(read('/sys/devices/system/cpu/online') ?? '');
  const allowed = allowedLine === undefined ? undefined : parseCpuList(allowedLine.slice('Cpus_allowed_list:'.length))
    ?.filter((cpu) => online === undefined || online.includes(cpu));
  if (allowed !== undefined && allowed.length > 0) {
    const cores = new Set<string>();
    for (const cpu of allowed) {
      const topology = `/sys/devices/system/cpu/cpu${cpu}/topology`;
      const siblings = read(`${topology}/core_cpus_list`) ?? read(`${topology}/thread_siblings_list`);
      if (siblings === undefined) {
        cores.clear();
        break;
      }
      cores.add(siblings.trim());
    }
    if (cores.size > 0) return capped(cores.size, 'topology');
  }
  return capped(Math.max(1, parallelism()), 'available-parallelism');
}
