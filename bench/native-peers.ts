/**
 * Native programs the simulator benchmark measures against, built here with the system's gcc
 * (-O2 -fopenmp) and cached outside the repository (~/.cache/svc-bench, or $XDG_CACHE_HOME):
 * - QOKit's C simulator (csim), from a QOKit checkout or git directory the user points at
 *   (`--qokit DIR` or QOKIT_DIR; nothing is downloaded), linked with our driver
 *   bench/native/qokit-qaoa-driver.c, which times the same QAOA evaluation as ours;
 * - a STREAM-style copy (bench/native/stream-copy.c), the machine's practical memory bandwidth;
 * - an FP64 arithmetic probe (bench/native/fp64-peak.c), the cores' 128-bit SIMD peak with
 *   separate multiplies and adds and with fused multiply-adds.
 */
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';

const NATIVE = new URL('./native/', import.meta.url).pathname;
const FLAGS = ['-O2', '-fopenmp'];
const CSIM_PATH = 'qokit/fur/c/csim/src';
const CSIM_SOURCES = ['qaoa_fur.c', 'fur.c', 'diagonal.c'];

function cacheDir(): string {
  const base = process.env['XDG_CACHE_HOME'] || join(homedir(), '.cache');
  const dir = join(base, 'svc-bench');
  mkdirSync(dir, { recursive: true });
  return dir;
}

function gccVersion(): string {
  return execFileSync('gcc', ['--version'], { encoding: 'utf8' }).split('\n')[0]!;
}

/** Compiles `sources` (with include dir) into a cached executable named by their content hash. */
function buildCached(name: string, sources: string[], include: string | null): string {
  const hash = createHash('sha256');
  hash.update(gccVersion()).update(FLAGS.join(' '));
  for (const s of sources) hash.update(readFileSync(s));
  const exe = join(cacheDir(), `${name}-${hash.digest('hex').slice(0, 16)}`);
  if (!existsSync(exe)) {
    execFileSync('gcc', [...FLAGS, ...(include ? ['-I', include] : []), ...sources, '-lm', '-o', exe], { stdio: 'inherit' });
  }
  return exe;
}

/**
 * QOKit's csim sources: DIR/qokit/fur/c/csim/src in a checkout, or the same path at HEAD of a
 * git directory (bare clone or mirror), extracted into a temporary folder.
 */
function csimSources(dir: string): { src: string; revision: string; cleanup: () => void } {
  const inTree = join(dir, CSIM_PATH);
  if (existsSync(join(inTree, 'fur.c'))) {
    let revision = 'working tree';
    try {
      revision = execFileSync('git', ['-C', dir, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
    } catch {
      // not a git checkout: a plain copy of the sources
    }
    return { src: inTree, revision, cleanup: () => {} };
  }
  const out = mkdtempSync(join(tmpdir(), 'svc-qokit-'));
  for (const file of [...CSIM_SOURCES, 'fur.h', 'diagonal.h', 'qaoa_fur.h']) {
    writeFileSync(join(out, file), execFileSync('git', ['--git-dir', dir, 'show', `HEAD:${CSIM_PATH}/${file}`]));
  }
  const revision = execFileSync('git', ['--git-dir', dir, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
  return { src: out, revision, cleanup: () => rmSync(out, { recursive: true, force: true }) };
}

export interface QokitBuild {
  exe: string;
  revision: string;
  compiler: string;
}

/** Builds (or finds cached) QOKit csim + our driver; throws with the reason when it cannot. */
export function buildQokit(dir: string): QokitBuild {
  const { src, revision, cleanup } = csimSources(dir);
  try {
    const exe = buildCached('qokit-qaoa', [join(NATIVE, 'qokit-qaoa-driver.c'), ...CSIM_SOURCES.map((f) => join(src, f))], src);
    return { exe, revision, compiler: `${gccVersion()} ${FLAGS.join(' ')}` };
  } finally {
    cleanup();
  }
}

export interface NativeTiming {
  seconds: number[];
  expectation: number;
  threads: number;
}

/** One QOKit evaluation series on our graph and angles (svc's conventions; the driver converts). */
export function runQokit(
  build: QokitBuild,
  n: number,
  edges: ReadonlyArray<{ i: number; j: number }>,
  gammas: readonly number[],
  betas: readonly number[],
  runs: number,
  threads: number,
): NativeTiming {
  const input = `${n} ${edges.length} ${gammas.length} ${runs}\n${edges.map((e) => `${e.i} ${e.j}`).join('\n')}\n${gammas.join(' ')}\n${betas.join(' ')}\n`;
  const out = execFileSync(build.exe, { input, encoding: 'utf8', env: { ...process.env, OMP_NUM_THREADS: String(threads), OMP_PROC_BIND: 'false' } });
  return JSON.parse(out) as NativeTiming;
}

/** Best-of-`runs` STREAM copy over two arrays of 2^log2 doubles: GB/s counting 16 B per element. */
export function streamCopy(log2: number, runs: number, threads: number): { gbps: number; seconds: number } {
  const exe = buildCached('stream-copy', [join(NATIVE, 'stream-copy.c')], null);
  const out = execFileSync(exe, [String(log2), String(runs)], { encoding: 'utf8', env: { ...process.env, OMP_NUM_THREADS: String(threads) } });
  return JSON.parse(out) as { gbps: number; seconds: number };
}

/** GFLOP/s of 128-bit FP64 SIMD: all threads by the wall clock, and per CPU second of one thread. */
export interface Fp64Peak {
  threads: number;
  muladd: number;
  fma: number;
  muladdPerCpu: number;
  fmaPerCpu: number;
  hasFma: boolean;
}

/** The FP64 peak probe on `threads` OpenMP threads, best of `runs` (each ~0.1–0.5 s of arithmetic). */
export function fp64Peak(threads: number, runs = 5, millions = 100): Fp64Peak {
  const exe = buildCached('fp64-peak', [join(NATIVE, 'fp64-peak.c')], null);
  const out = execFileSync(exe, [String(millions), String(runs)], { encoding: 'utf8', env: { ...process.env, OMP_NUM_THREADS: String(threads), OMP_PROC_BIND: 'false' } });
  return JSON.parse(out) as Fp64Peak;
}
