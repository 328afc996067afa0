import assert from 'node:assert/strict';
import { availableParallelism } from 'node:os';
import { test } from 'node:test';
import { cgroupQuota, cpuCores, defaultThreads, parseCpuList, type ReadText } from '../../src/inference/cpu-threads.ts';

/** A fake /proc and /sys: `cpus` maps each logical CPU to its core's sibling list. */
function machine(options: { allowed: string; online?: string; siblings: Record<number, string>; files?: Record<string, string> }): ReadText {
  const files = new Map<string, string>([
    ['/proc/self/status', `Name:\tnode\nCpus_allowed:\tff\nCpus_allowed_list:\t${options.allowed}\n`],
    ...Object.entries(options.files ?? {}),
  ]);
  if (options.online !== undefined) files.set('/sys/devices/system/cpu/online', `${options.online}\n`);
  for (const [cpu, list] of Object.entries(options.siblings)) files.set(`/sys/devices/system/cpu/cpu${cpu}/topology/core_cpus_list`, `${list}\n`);
  return (path) => files.get(path);
}

const noParallelism = () => {
  throw new Error('should have used the topology');
};

test('parseCpuList reads the kernel\'s list format', () => {
  assert.deepEqual(parseCpuList('0-3,8,10-11\n'), [0, 1, 2, 3, 8, 10, 11]);
  assert.deepEqual(parseCpuList('5'), [5]);
  assert.equal(parseCpuList(''), undefined);
  assert.equal(parseCpuList('3-1'), undefined);
  assert.equal(parseCpuList('a-b'), undefined);
});

test('SMT siblings count as one physical core', () => {
  // 4 logical CPUs, 2 cores with 2 hyperthreads each (siblings 0,2 and 1,3).
  const read = machine({ allowed: '0-3', siblings: { 0: '0,2', 1: '1,3', 2: '0,2', 3: '1,3' } });
  assert.deepEqual(cpuCores(read, noParallelism), { usable: 2, source: 'topology' });
  assert.equal(defaultThreads(cpuCores(read, noParallelism)), 1);
});

test('one thread per physical core but one', () => {
  const siblings = Object.fromEntries(Array.from({ length: 8 }, (_, i) => [i, String(i)]));
  assert.equal(defaultThreads(cpuCores(machine({ allowed: '0-7', siblings }), noParallelism)), 7);
  // Affinity (taskset, a cpuset) limits the cores this process may use.
  assert.equal(defaultThreads(cpuCores(machine({ allowed: '0-3', siblings }), noParallelism)), 3);
  // A mask naming CPUs that are not online counts the online ones only.
  assert.equal(cpuCores(machine({ allowed: '0-255', online: '0-1', siblings: { 0: '0', 1: '1' } }), noParallelism).usable, 2);
});

test('never fewer than one thread', () => {
  assert.equal(defaultThreads({ usable: 1, source: 'topology' }), 1);
  assert.equal(defaultThreads({ usable: 2, source: 'topology' }), 1);
});

test('a cgroup CPU quota caps the cores (containers started with --cpus)', () => {
  const siblings = Object.fromEntries(Array.from({ length: 16 }, (_, i) => [i, String(i)]));
  const v2 = (max: string) => machine({
    allowed: '0-15', siblings,
    files: { '/proc/self/cgroup': '0::/docker/abc\n', '/sys/fs/cgroup/docker/abc/cpu.max': `${max}\n` },
  });
  assert.deepEqual(cpuCores(v2('150000 100000'), noParallelism), { usable: 2, source: 'topology', quota: 2 });
  assert.equal(defaultThreads(cpuCores(v2('150000 100000'), noParallelism)), 1);
  assert.equal(cpuCores(v2('max 100000'), noParallelism).usable, 16);
  // A quota on a parent slice binds its children too; the smallest along the path wins.
  const nested = machine({
    allowed: '0-15', siblings,
    files: {
      '/proc/self/cgroup': '0::/system.slice/svc.service\n',
      '/sys/fs/cgroup/system.slice/svc.service/cpu.max': 'max 100000\n',
      '/sys/fs/cgroup/system.slice/cpu.max': '400000 100000\n',
      '/sys/fs/cgroup/cpu.max': '800000 100000\n',
    },
  });
  assert.equal(cgroupQuota(nested), 4);
  const v1 = machine({
    allowed: '0-15', siblings,
    files: {
      '/proc/self/cgroup': '4:memory:/x\n1:cpu,cpuacct:/\n',
      '/sys/fs/cgroup/cpu/cpu.cfs_quota_us': '400000\n',
      '/sys/fs/cgroup/cpu/cpu.cfs_period_us': '100000\n',
    },
  });
  assert.equal(cgroupQuota(v1), 4);
  assert.equal(defaultThreads(cpuCores(v1, noParallelism)), 3);
  // cgroup v1 without a quota writes -1.
  assert.equal(cgroupQuota(machine({ allowed: '0', siblings, files: { '/proc/self/cgroup': '1:cpu:/\n', '/sys/fs/cgroup/cpu/cpu.cfs_quota_us': '-1\n' } })), undefined);
});

test('without topology files (not Linux): available parallelism', () => {
  assert.deepEqual(cpuCores(() => undefined, () => 6), { usable: 6, source: 'available-parallelism' });
  assert.equal(defaultThreads(cpuCores(() => undefined, () => 6)), 5);
  // One CPU whose topology is missing: the count would be wrong, so fall back too.
  assert.equal(cpuCores(machine({ allowed: '0-1', siblings: { 0: '0' } }), () => 3).source, 'available-parallelism');
});

test('on this machine: between 1 and the logical CPUs', () => {
  const cores = cpuCores();
  assert.ok(cores.usable >= 1 && cores.usable <= availableParallelism(), JSON.stringify(cores));
  assert.equal(defaultThreads(), Math.max(1, cores.usable - 1));
});
