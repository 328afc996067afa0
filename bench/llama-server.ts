/**
 * llama.cpp's own server as a peer for bench/inference.ts, built from the very llama.cpp source
 * node-llama-cpp ships (its `llama/gitRelease.bundle`, the release named in
 * `llama/llama.cpp.info.json`, with the patches node-llama-cpp applies), so both sides run the
 * same llama.cpp commit.
 *
 * Built once with cmake + ninja (CPU only, Release, only the `llama-server` target) into
 * `~/.cache/svc-bench/llama-server-<release>/` (`SVC_BENCH_CACHE` overrides the parent folder),
 * outside the repository; a few minutes on 2 cores. Never built in CI or by `npm test`: with
 * `CI` set, a missing build is an error instead.
 *
 * Build flags: the instruction sets of the CPU variant node-llama-cpp's prebuilt binary loads
 * here (it ships one CPU backend per x86 level, e.g. `sapphirerapids`, `zen4`, `haswell`, and
 * picks the best at run time), so both sides run the same kernels; `GGML_NATIVE=ON` where there
 * are no variants. `GGML_OPENMP=OFF` as in those binaries; static; no TLS, no web UI.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '../test/helpers/free-port.ts';

const NODE_LLAMA_CPP = join(dirname(fileURLToPath(import.meta.resolve('node-llama-cpp'))), '..');
const LLAMA_DIR = join(NODE_LLAMA_CPP, 'llama');

/** The llama.cpp release node-llama-cpp ships, e.g. `v0.5.0`. */
export function llamaCppRelease(): string {
  const info = JSON.parse(readFileSync(join(LLAMA_DIR, 'llama.cpp.info.json'), 'utf8')) as { tag: string };
  return info.tag;
}

/** Flags every build gets: CPU only, static, no TLS or web UI; OpenMP off as in node-llama-cpp's prebuilt binaries. */
const COMMON_FLAGS = [
  '-DCMAKE_BUILD_TYPE=Release',
  '-DBUILD_SHARED_LIBS=OFF',
  '-DGGML_OPENMP=OFF',
  '-DLLAMA_OPENSSL=OFF',
  '-DLLAMA_BUILD_TESTS=OFF',
  '-DLLAMA_BUILD_EXAMPLES=OFF',
  '-DLLAMA_BUILD_UI=OFF',
  '-DLLAMA_USE_PREBUILT_UI=OFF',
  '-DLLAMA_BUILD_APP=OFF',
];

/**
 * The CPU backend variant node-llama-cpp's prebuilt binary loads on this machine (e.g.
 * `sapphirerapids`, `zen4`, `haswell`), read from its load log; undefined when it is not a
 * variant build (a local build, or an architecture without variants).
 */
export async function nodeLlamaCppCpuVariant(): Promise<string | undefined> {
  const { getLlama, LlamaLogLevel } = await import('node-llama-cpp');
  let variant: string | undefined;
  const llama = await getLlama({
    gpu: false, build: 'never', progressLogs: false, logLevel: LlamaLogLevel.debug,
    logger: (_level, message) => { variant ??= /libggml-cpu-([\w.-]+)\.so/.exec(message)?.[1]; },
  });
  await llama.dispose();
  return variant;
}

/**
 * The cmake flags that compile llama.cpp's CPU backend for the same instruction sets as
 * `variant`, read from that variant's `ggml_add_cpu_backend_variant(...)` line in the source
 * (x86 only); `GGML_NATIVE=ON` when there is no such variant.
 */
function cpuFlags(source: string, variant: string | undefined): string[] {
  if (variant === undefined) return ['-DGGML_NATIVE=ON'];
  const cmake = readFileSync(join(source, 'ggml', 'src', 'CMakeLists.txt'), 'utf8');
  // The x86 block of `if (GGML_CPU_ALL_VARIANTS)`, up to the next architecture's.
  const variants = cmake.slice(Math.max(0, cmake.indexOf('if (GGML_CPU_ALL_VARIANTS)')));
  const x86 = /GGML_SYSTEM_ARCH STREQUAL "x86"\)([\s\S]*?)elseif\s*\(GGML_SYSTEM_ARCH/.exec(variants)?.[1] ?? '';
  const lines = [...x86.matchAll(/ggml_add_cpu_backend_variant\((\w+)([^)]*)\)/g)];
  const features = new Map(lines.map((m) => [m[1]!, (m[2] ?? '').trim().split(/\s+/).filter((f) => f !== '')]));
  const mine = features.get(variant);
  if (mine === undefined || !lines.some((m) => m[1] === 'haswell')) return ['-DGGML_NATIVE=ON'];
  const all = new Set([...features.values()].flat());
  return ['-DGGML_NATIVE=OFF', ...[...all].sort().map((f) => `-DGGML_${f}=${mine.includes(f) ? 'ON' : 'OFF'}`)];
}

function run(command: string, args: string[], cwd: string, log: (line: string) => void): Promise<void> {
  log(`$ ${command} ${args.join(' ')}`);
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let tail = '';
    const keep = (data: Buffer): void => { tail = (tail + data.toString()).slice(-4000); };
    child.stdout.on('data', (data: Buffer) => {
      keep(data);
      // ninja's "[n/204] Building …" lines: show progress without flooding the terminal.
      const last = data.toString().trim().split('\n').at(-1) ?? '';
      if (/^\[\d+\/\d+\]/.test(last)) process.stderr.write(`\r  ${last.slice(0, 100).padEnd(100)}`);
    });
    child.stderr.on('data', keep);
    child.on('error', reject);
    child.on('exit', (code) => {
      process.stderr.write('\n');
      if (code === 0) resolve();
      else reject(new Error(`${command} exited with ${code}:\n${tail}`));
    });
  });
}

/**
 * The cached llama-server binary for this CPU variant (see nodeLlamaCppCpuVariant), built first
 * when missing.
 */
export async function ensureLlamaServer(variant: string | undefined, log: (line: string) => void): Promise<{ binary: string; flags: string[] }> {
  const release = llamaCppRelease();
  const root = join(process.env.SVC_BENCH_CACHE ?? join(homedir(), '.cache', 'svc-bench'), `llama-server-${release}`);
  const source = join(root, 'src');
  const build = join(root, `build-${variant ?? 'native'}`);
  const binary = join(build, 'bin', 'llama-server');
  const stamp = join(build, 'svc-build-flags.json');
  if (existsSync(binary) && existsSync(stamp)) return { binary, flags: JSON.parse(readFileSync(stamp, 'utf8')) as string[] };
  if (process.env.CI !== undefined) throw new Error(`llama-server is not built (${binary}); the bench never builds it in CI.`);

  log(`building llama-server ${release} (${variant ?? 'native'} CPU) from node-llama-cpp's bundled source into ${build} (once; minutes)…`);
  if (!existsSync(join(source, 'CMakeLists.txt'))) {
    rmSync(source, { recursive: true, force: true });
    mkdirSync(root, { recursive: true });
    await run('git', ['clone', '--quiet', join(LLAMA_DIR, 'gitRelease.bundle'), source], root, log);
    // The same patch node-llama-cpp applies when it builds from this source (skipped there
    // when the source already has it, as here).
    const loader = readFileSync(join(source, 'src', 'llama-model-loader.cpp'), 'utf8');
    if (!loader.includes('n_tensors = gguf_get_n_tensors(metadata);')) {
      await run('git', ['apply', '--ignore-whitespace', join(LLAMA_DIR, 'patches', 'PR-22566.diff')], source, log);
    }
  }
  const flags = [...COMMON_FLAGS, ...cpuFlags(source, variant)];
  await run('cmake', ['-S', source, '-B', build, '-G', 'Ninja', ...flags], root, log);
  await run('cmake', ['--build', build, '--target', 'llama-server', '-j', String(availableParallelism())], root, log);
  writeFileSync(stamp, JSON.stringify(flags));
  return { binary, flags };
}

/** The binary's version line, e.g. `version: 0.5.0-dev (build 1, commit de3ff81)`. */
export function llamaServerVersion(binary: string): string {
  // It prints the version on stderr.
  const { stdout, stderr } = spawnSync(binary, ['--version'], { encoding: 'utf8' });
  const out = `${stdout}\n${stderr}`;
  return out.split('\n').find((l) => l.startsWith('version:')) ?? out.trim();
}

export interface LlamaServerProcess {
  url: string;
  /** The command line, for the report. */
  args: string[];
  /** The server's process id (its CPU time is read from /proc). */
  pid: number | undefined;
  stop(): Promise<void>;
}

/**
 * Starts llama-server shaped like svc's context: `slots` parallel sequences with
 * `contextPerSlot` tokens each in separate (non-unified) KV caches, as node-llama-cpp creates
 * them, flash attention off (node-llama-cpp's default), `threads` for generation and prompts.
 */
export async function startLlamaServer(binary: string, options: { model: string; threads: number; slots: number; contextPerSlot: number }): Promise<LlamaServerProcess> {
  const port = await freePort();
  const args = [
    '--model', options.model,
    '--alias', 'bench',
    '--threads', String(options.threads),
    '--threads-batch', String(options.threads),
    '--parallel', String(options.slots),
    '--ctx-size', String(options.slots * options.contextPerSlot),
    '--no-kv-unified',
    '--flash-attn', 'off',
    '--host', '127.0.0.1',
    '--port', String(port),
    '--no-webui',
  ];
  const child = spawn(binary, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => { stderr = (stderr + d.toString()).slice(-8000); });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`llama-server exited with ${child.exitCode}:\n${stderr}`);
    try {
      const res = await fetch(`${url}/health`);
      if (res.status === 200) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`llama-server did not become healthy in 60 s:\n${stderr}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url,
    args,
    pid: child.pid,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}
