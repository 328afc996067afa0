/**
 * QAOA expectation evaluation benchmark (issues 3 and 13): prepare |+>^n, apply p = 3 layers of
 * (MaxCut cost phase, X mixer), return ⟨C⟩, on random 3-regular graphs.
 *
 *   npm run bench:quantum                 # n = 16, 20, 24; quantum-circuit at 12, 14, 16
 *   npm run bench:quantum -- --qokit ~/src/QOKit   # also QOKit's C simulator, built here
 *   npm run bench:quantum -- --quick      # n = 12, 16, 20; quantum-circuit at 10, 12
 *   npm run bench:quantum -- --sizes 16,20 --peer-sizes 12 --runs 5
 *   npm run bench:quantum -- --fast-only  # only the fast paths (no references, no peers)
 *
 * Paths compared, on the same graph and angles, in one run:
 * - fast:        qaoaExpectation on a prepared diagonal, both threads (the production path:
 *                WebAssembly SIMD passes, fused multiply-adds where the engine has relaxed SIMD)
 * - exact:       the same with the bit-exact WebAssembly passes (kernel: 'wasm-exact')
 * - before:      the path before issue 30: bit-exact passes, blocks of 2^14 amplitudes, phase
 *                and mixer in separate sweeps
 *                (fast, exact and before run interleaved, round by round, so load hits all three)
 * - fast, JS:    the same schedule with the JavaScript passes (kernel: 'js')
 * - fast 1T:     the production path on one thread
 * - layered:     the QOKit algorithm without fusion: one diagonal pass + n RX passes per layer
 * - gate-by-gate: the circuit as individual H / RZZ / RX gates (applyH/applyRZZ/applyRX)
 * - QOKit csim:  QOKit's C simulator built with gcc -O2 -fopenmp from the checkout or git dir
 *                given by --qokit (or QOKIT_DIR), 2 OpenMP threads, timed by our driver
 *                (bench/native/qokit-qaoa-driver.c: state init + apply_qaoa_furx + ⟨C⟩)
 * - quantum-circuit (npm): the same H / ZZ / RX circuit, at the sizes where it finishes
 * Every path's expectation is checked against the fast one (|Δ| < 1e-9; QOKit's < 1e-6), the fused
 * one against the JavaScript passes to 1e-12 and the exact one bit for bit.
 * Arithmetic: GFLOP/s counted as 4n + 6 flops per amplitude and layer (FMA counts 2), against the
 * FP64 128-bit SIMD peak of a native probe (bench/native/fp64-peak.c) run right after each size.
 * Bandwidth: the bytes the fast path moves per evaluation over its time, against a STREAM-style
 * copy (bench/native/stream-copy.c, 2 threads) over arrays of the state's size.
 */
import { createRequire } from 'node:module';
import { availableParallelism, cpus, loadavg, totalmem } from 'node:os';
import {
  Circuit,
  expectationDiagonal,
  maxCutDiagonal,
  maxCutTerms,
  prepareDiagonal,
  qaoaExpectation,
  qaoaExpectationReference,
  seededRng,
  shutdownQaoaTeam,
  StateVector,
} from '../src/quantum/simulator/index.ts';
import type { Edge } from '../src/quantum/simulator/index.ts';
import { buildQokit, fp64Peak, runQokit, streamCopy } from './native-peers.ts';
import type { Fp64Peak, QokitBuild } from './native-peers.ts';
const GAMMAS = [0.2, 0.4, 0.6];
const BETAS = [0.6, 0.4, 0.2];

interface Args {
  sizes: number[];
  peerSizes: number[];
  runs: number | null;
  gateByGateMax: number;
  fastOnly: boolean;
  qokit: string | null;
}

function parseArgs(argv: string[]): Args {
  const quick = argv.includes('--quick');
  const list = (flag: string, fallback: number[]): number[] => {
    const k = argv.indexOf(flag);
    if (k < 0 || argv[k + 1] === undefined) return fallback;
    return argv[k + 1]!.split(',').filter((x) => x.trim() !== '').map(Number);
  };
  const num = (flag: string): number | null => {
    const k = argv.indexOf(flag);
    return k >= 0 && argv[k + 1] ? Number(argv[k + 1]) : null;
  };
  return {
    sizes: list('--sizes', quick ? [12, 16, 20] : [16, 20, 24]),
    peerSizes: list('--peer-sizes', quick ? [10, 12] : [12, 14, 16]),
    runs: num('--runs'),
    gateByGateMax: num('--gate-by-gate-max') ?? 24,
    fastOnly: argv.includes('--fast-only'),
    qokit: (argv.includes('--qokit') ? argv[argv.indexOf('--qokit') + 1] : undefined) ?? (process.env['QOKIT_DIR'] || null),
  };
}

/** A random 3-regular simple graph (pairing model with rejection), deterministic per seed. */
function random3Regular(n: number, seed: string): Edge[] {
  const rng = seededRng(seed);
  for (let attempt = 0; attempt < 10_000; attempt++) {
    const points: number[] = [];
    for (let v = 0; v < n; v++) points.push(v, v, v);
    for (let k = points.length - 1; k > 0; k--) {
      const j = Math.floor(rng.next() * (k + 1));
      [points[k], points[j]] = [points[j]!, points[k]!];
    }
    const seen = new Set<number>();
    const edges: Edge[] = [];
    let ok = true;
    for (let k = 0; k < points.length; k += 2) {
      const i = Math.min(points[k]!, points[k + 1]!);
      const j = Math.max(points[k]!, points[k + 1]!);
      if (i === j || seen.has(i * n + j)) {
        ok = false;
        break;
      }
      seen.add(i * n + j);
      edges.push({ i, j });
    }
    if (ok) return edges;
  }
  throw new Error(`no 3-regular graph found for n=${n}`);
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/**
 * Runs f `runs` times after one warm-up; returns the median and fastest wall seconds, the last
 * value, and process CPU seconds per wall second (≈ threads actually running: a 2-thread path
 * that shows ~1 was sharing the cores with other work).
 */
function time(runs: number, f: () => number, warmup = true): { seconds: number; min: number; cpuPerWall: number; value: number; all: number[] } {
  let value = warmup ? f() : Number.NaN;
  const all: number[] = [];
  let cpu = 0;
  for (let r = 0; r < runs; r++) {
    const c0 = process.cpuUsage();
    const t = performance.now();
    value = f();
    all.push((performance.now() - t) / 1000);
    const c = process.cpuUsage(c0);
    cpu += (c.user + c.system) / 1e6;
  }
  const wall = all.reduce((a, b) => a + b, 0);
  return { seconds: median(all), min: Math.min(...all), cpuPerWall: cpu / wall, value, all };
}

type Timed = ReturnType<typeof time> & { minCpu: number };

/** Like time(), for several paths run interleaved: one run of each per round, after one warm-up round. */
function timeInterleaved(runs: number, fs: Array<() => number>): Timed[] {
  const out = fs.map(() => ({ all: [] as number[], cpu: 0, minCpu: Infinity, value: Number.NaN }));
  fs.forEach((f, k) => (out[k]!.value = f()));
  for (let r = 0; r < runs; r++) {
    fs.forEach((f, k) => {
      const c0 = process.cpuUsage();
      const t = performance.now();
      out[k]!.value = f();
      out[k]!.all.push((performance.now() - t) / 1000);
      const c = process.cpuUsage(c0);
      out[k]!.cpu += (c.user + c.system) / 1e6;
      out[k]!.minCpu = Math.min(out[k]!.minCpu, (c.user + c.system) / 1e6);
    });
  }
  return out.map((o) => {
    const wall = o.all.reduce((a, b) => a + b, 0);
    return { seconds: median(o.all), min: Math.min(...o.all), cpuPerWall: o.cpu / wall, value: o.value, all: o.all, minCpu: o.minCpu };
  });
}

function gateByGate(n: number, edges: Edge[], diag: Float64Array): number {
  const { quadratic, constant } = maxCutTerms(edges);
  const c = new Circuit(n);
  for (let q = 0; q < n; q++) c.h(q);
  for (let l = 0; l < GAMMAS.length; l++) c.costLayer(quadratic, [], GAMMAS[l]!, constant, 'maxcut', diag).mixerX(BETAS[l]!);
  const s = StateVector.zero(n);
  c.runGateByGate(s);
  return expectationDiagonal(s, diag);
}

interface QcInstance {
  appendGate(name: string, wires: number | number[], options?: { params: Record<string, number> }): void;
  run(): void;
  state: Record<string, { re: number; im: number } | undefined>;
}
type QcCtor = new (qubits: number) => QcInstance;

/** The same circuit on npm quantum-circuit; returns ⟨C⟩ under whichever wire↔bit order matches ours. */
function quantumCircuit(Qc: QcCtor, n: number, edges: Edge[], diag: Float64Array): { seconds: number; value: number } {
  const { quadratic } = maxCutTerms(edges);
  const qc = new Qc(n);
  for (let q = 0; q < n; q++) qc.appendGate('h', q);
  for (let l = 0; l < GAMMAS.length; l++) {
    // e^{-iγ·cut} = global phase · Π RZZ(2γw) with w = -1/2 per edge, as in Circuit.costLayer
    for (const t of quadratic) qc.appendGate('zz', [t.i, t.j], { params: { theta: 2 * GAMMAS[l]! * t.w } });
    for (let q = 0; q < n; q++) qc.appendGate('rx', q, { params: { theta: 2 * BETAS[l]! } });
  }
  const t0 = performance.now();
  qc.run();
  const seconds = (performance.now() - t0) / 1000;
  const reverse = (z: number): number => {
    let r = 0;
    for (let b = 0; b < n; b++) if ((z >> b) & 1) r |= 1 << (n - 1 - b);
    return r;
  };
  let direct = 0;
  let reversed = 0;
  for (const [key, amp] of Object.entries(qc.state)) {
    if (!amp) continue;
    const z = Number(key);
    const p = amp.re * amp.re + amp.im * amp.im;
    direct += p * diag[z]!;
    reversed += p * diag[reverse(z)]!;
  }
  return { seconds, value: [direct, reversed] as unknown as number };
}

function fmtS(s: number): string {
  if (s >= 1) return `${s.toFixed(2)} s`;
  if (s >= 0.001) return `${(s * 1000).toFixed(1)} ms`;
  return `${(s * 1e6).toFixed(0)} µs`;
}

function mib(bytes: number): string {
  return `${(bytes / 1024 ** 2).toFixed(bytes < 1024 ** 2 ? 2 : 0)} MiB`;
}

function check(label: string, got: number, want: number): void {
  if (!(Math.abs(got - want) < 1e-9)) throw new Error(`${label}: expectation ${got} differs from the fast path's ${want}`);
}

async function main(): Promise<void> {
  process.on('exit', () => console.log(`\nload average at end: ${loadavg().map((x) => x.toFixed(2)).join(' ')}`));
  const args = parseArgs(process.argv.slice(2));
  const cpu = cpus()[0]?.model ?? 'unknown CPU';
  console.log(`# QAOA expectation benchmark (MaxCut, random 3-regular, p = 3)`);
  console.log(`machine: ${cpu}, ${availableParallelism()} threads, ${(totalmem() / 1024 ** 3).toFixed(1)} GiB; node ${process.version}`);
  console.log(`load average at start: ${loadavg().map((x) => x.toFixed(2)).join(' ')} (other work on the machine slows every column)`);
  console.log(`command: npm run bench:quantum${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(' ')}` : ''}\n`);

  let qokitBuild: QokitBuild | null = null;
  if (args.qokit && !args.fastOnly) {
    try {
      qokitBuild = buildQokit(args.qokit);
      console.log(`QOKit csim: ${args.qokit} at ${qokitBuild.revision}, ${qokitBuild.compiler}, 2 OpenMP threads`);
    } catch (err) {
      console.log(`QOKit csim: not measured (${(err as Error).message.split('\n')[0]})`);
    }
  } else if (!args.fastOnly) {
    console.log('QOKit csim: not measured (pass --qokit <QOKit checkout or git dir>, or set QOKIT_DIR)');
  }
  const rows: string[] = [];
  const bandwidthRows: string[] = [];
  const arithmeticRows: string[] = [];
  const oneThreadRows: string[] = [];
  const peaks: Array<readonly [Fp64Peak, Fp64Peak]> = [];
  const fastAt = new Map<number, number>();
  const p = GAMMAS.length;
  for (const n of args.sizes) {
    const edges = random3Regular(n, `bench-${n}`);
    const tb = performance.now();
    const diag = maxCutDiagonal(n, edges);
    const prepared = prepareDiagonal(diag, { shared: true });
    const buildSeconds = (performance.now() - tb) / 1000;
    const runs = args.runs ?? (n <= 16 ? 21 : n <= 20 ? 9 : 5);
    const [fast, exact, before] = timeInterleaved(runs, [
      () => qaoaExpectation(n, prepared, GAMMAS, BETAS),
      () => qaoaExpectation(n, prepared, GAMMAS, BETAS, { kernel: 'wasm-exact' }),
      () => qaoaExpectation(n, prepared, GAMMAS, BETAS, { kernel: 'wasm-exact', lowBits: 14, fusePhase: false }),
    ]) as [Timed, Timed, Timed];
    // the same three on one thread, by CPU time (what a core does while it runs them: on a busy
    // machine a 2-thread team's wall clock mostly measures waiting for the other thread)
    const oneThread = timeInterleaved(runs, [
      () => qaoaExpectation(n, prepared, GAMMAS, BETAS, { threads: 1 }),
      () => qaoaExpectation(n, prepared, GAMMAS, BETAS, { threads: 1, kernel: 'wasm-exact' }),
      () => qaoaExpectation(n, prepared, GAMMAS, BETAS, { threads: 1, kernel: 'wasm-exact', lowBits: 14, fusePhase: false }),
    ]);
    const js = time(runs, () => qaoaExpectation(n, prepared, GAMMAS, BETAS, { kernel: 'js' }));
    check('JavaScript passes', js.value, fast.value);
    if (!(Math.abs(fast.value - js.value) <= 1e-12)) throw new Error(`fused passes: ⟨C⟩ ${fast.value} differs from the JavaScript passes' ${js.value} by more than 1e-12`);
    if (exact.value !== js.value) throw new Error(`exact passes: ⟨C⟩ ${exact.value} is not the JavaScript passes' ${js.value} bit for bit`);
    check('before', before.value, fast.value);
    const single = time(runs, () => qaoaExpectation(n, prepared, GAMMAS, BETAS, { threads: 1 }));
    check('single-thread', single.value, fast.value);
    let layered: { seconds: number; value: number } | null = null;
    if (!args.fastOnly) {
      layered = time(n >= 24 ? 1 : Math.min(runs, 5), () => qaoaExpectationReference(n, diag, GAMMAS, BETAS), n < 24);
      check('layered', layered.value, fast.value);
    }
    let gbg: { seconds: number; value: number } | null = null;
    if (!args.fastOnly && n <= args.gateByGateMax) {
      gbg = time(n >= 24 ? 1 : Math.min(runs, 3), () => gateByGate(n, edges, diag), n < 24);
      check('gate-by-gate', gbg.value, fast.value);
    }
    let qokit = '–';
    if (qokitBuild) {
      const q = runQokit(qokitBuild, n, edges, GAMMAS, BETAS, runs, 2);
      if (!(Math.abs(q.expectation - fast.value) < 1e-6)) throw new Error(`QOKit ⟨C⟩ ${q.expectation} differs from ours ${fast.value}`);
      const qs = median(q.seconds);
      qokit = `${fmtS(qs)}: ours/QOKit **${(fast.seconds / qs).toFixed(2)}**`;
      console.error(`n=${n}: QOKit ${fmtS(qs)} [${q.seconds.map(fmtS).join(', ')}], ⟨C⟩ = ${q.expectation.toFixed(6)} (Δ ${(q.expectation - fast.value).toExponential(1)})`);
    }
    fastAt.set(n, fast.seconds);
    const rss = process.resourceUsage().maxRSS * 1024;
    rows.push(
      `| ${n} | ${fmtS(fast.seconds)} (min ${fmtS(fast.min)}, CPU/wall ${fast.cpuPerWall.toFixed(2)}) | ${fmtS(js.seconds)} (${(js.seconds / fast.seconds).toFixed(1)}×) | ${fmtS(single.seconds)} | ` +
        `${layered ? `${fmtS(layered.seconds)} (${(layered.seconds / fast.seconds).toFixed(1)}×)` : 'skipped'} | ` +
        `${gbg ? `${fmtS(gbg.seconds)} (${(gbg.seconds / fast.seconds).toFixed(1)}×)` : 'skipped'} | ${qokit} | ` +
        `${mib(2 ** n * 16)} + ${mib(2 ** n * 2)} | ${mib(rss)} | ${fmtS(buildSeconds)} | ${runs} |`,
    );
    // bytes the fast path moves per evaluation: per amplitude, the low pass reads re, im and the
    // 2-byte cost index and writes re, im (the first layer reads no state), the high pass reads
    // and writes re, im, and the last high pass reads the index again for ⟨C⟩
    const N = 2 ** n;
    const bytes = N * (p * (16 + 2 + 16 + 32) - 16 + 2);
    const gbps = bytes / fast.seconds / 1e9;
    const flops = `${((N * p * (4 * n + 6)) / fast.seconds / 1e9).toFixed(1)} GFLOP/s`;
    const peak = [fp64Peak(1), fp64Peak(2)] as const;
    peaks.push(peak);
    const gf = (t: { seconds: number }): number => (N * p * (4 * n + 6)) / t.seconds / 1e9;
    const perCpu = (t: { seconds: number; cpuPerWall: number }): number => gf(t) / t.cpuPerWall;
    const pct = (x: number, of: number): string => (of > 0 ? `${((100 * x) / of).toFixed(0)}%` : '–');
    arithmeticRows.push(
      `| ${n} | **${gf(fast).toFixed(1)}** (${perCpu(fast).toFixed(1)} per CPU-s) | ${gf(exact).toFixed(1)} (${perCpu(exact).toFixed(1)}) | ${gf(before).toFixed(1)} (${perCpu(before).toFixed(1)}) | ` +
        `${peak[1].muladd.toFixed(1)} / ${peak[1].fma.toFixed(1)} (${peak[0].muladdPerCpu.toFixed(1)} / ${peak[0].fmaPerCpu.toFixed(1)} per CPU-s) | ` +
        `${pct(gf(fast), peak[1].fma)} (${pct(perCpu(fast), peak[0].fmaPerCpu)}) | ${pct(gf(exact), peak[1].muladd)} (${pct(perCpu(exact), peak[0].muladdPerCpu)}) | ` +
        `${fmtS(fast.seconds)} / ${fmtS(exact.seconds)} / ${fmtS(before.seconds)}: before/fast **${(before.seconds / fast.seconds).toFixed(2)}** | ${Math.abs(fast.value - js.value).toExponential(1)} |`,
    );
    const [f1, e1, b1] = oneThread as [Timed, Timed, Timed];
    const g1 = (t: { minCpu: number }): number => (N * p * (4 * n + 6)) / t.minCpu / 1e9;
    oneThreadRows.push(
      `| ${n} | ${fmtS(f1.minCpu)}: **${g1(f1).toFixed(1)}** | ${fmtS(e1.minCpu)}: ${g1(e1).toFixed(1)} | ${fmtS(b1.minCpu)}: ${g1(b1).toFixed(1)} | ` +
        `${peak[0].muladdPerCpu.toFixed(1)} / ${peak[0].fmaPerCpu.toFixed(1)} | ${pct(g1(f1), peak[0].fmaPerCpu)} | ${pct(g1(e1), peak[0].muladdPerCpu)} | **${(b1.minCpu / f1.minCpu).toFixed(2)}** | ${(e1.minCpu / f1.minCpu).toFixed(2)} |`,
    );
    if (N * 16 < 64 * 1024 ** 2) {
      // a state this small stays in the caches: a memory-bandwidth comparison says nothing
      bandwidthRows.push(`| ${n} | ${(bytes / p / 1024 ** 2).toFixed(0)} MiB | ${gbps.toFixed(1)} GB/s | – (state in cache) | – | ${flops} |`);
    } else {
      const copy = streamCopy(n, 10, 2);
      bandwidthRows.push(
        `| ${n} | ${(bytes / p / 1024 ** 2).toFixed(0)} MiB | ${gbps.toFixed(1)} GB/s | ${copy.gbps.toFixed(1)} GB/s | **${((100 * gbps) / copy.gbps).toFixed(0)}%** | ${flops} |`,
      );
    }
    console.error(`n=${n}: fast ${fmtS(fast.seconds)} [${fast.all.map(fmtS).join(', ')}], ⟨C⟩ = ${fast.value.toFixed(6)}`);
  }
  await shutdownQaoaTeam();

  console.log('| n | fast, 2 threads: median (fastest, CPU/wall) | fast, JavaScript passes | fast, 1 thread | layered, unfused | gate-by-gate (H/RZZ/RX) | QOKit csim, 2 threads | state + cost index | peak RSS | diagonal build | runs |');
  console.log('|---|---|---|---|---|---|---|---|---|---|---|');
  for (const r of rows) console.log(r);
  console.log('\n| n | moved per layer (fast path) | achieved | STREAM copy, 2 threads | share of copy | arithmetic (4n + 6 flops per amplitude and layer) |');
  console.log('|---|---|---|---|---|---|');
  for (const r of bandwidthRows) console.log(r);
  console.log(
    '\n| n | fast (fused), GFLOP/s, 2 threads | exact | before (exact, 2^14 blocks, phase apart) | FP64 128-bit peak, 2 threads: mul+add / FMA (1 thread per CPU-s) | fast / FMA peak | exact / mul+add peak | median: fast / exact / before | fused ⟨C⟩ − JavaScript ⟨C⟩ |',
  );
  console.log('|---|---|---|---|---|---|---|---|---|');
  for (const r of arithmeticRows) console.log(r);
  console.log(
    '\n| n | fast (fused), 1 thread: fewest CPU seconds: GFLOP per CPU-s | exact | before | FP64 peak per CPU-s, mul+add / FMA | fused / FMA peak | exact / mul+add peak | before / fast | exact / fast |',
  );
  console.log('|---|---|---|---|---|---|---|---|---|');
  for (const r of oneThreadRows) console.log(r);
  if (peaks.length > 0 && !peaks[0]![0].hasFma) console.log('(this CPU has no FMA: the fused passes run as separate multiplies and adds, the FMA peak is not measured)');

  if (args.peerSizes.length > 0 && !args.fastOnly) {
    const require = createRequire(import.meta.url);
    const Qc = require('quantum-circuit') as QcCtor;
    console.log('\n| n | quantum-circuit (npm) | ours, fast | speed-up | gate-by-gate ours | speed-up |');
    console.log('|---|---|---|---|---|---|');
    for (const n of args.peerSizes) {
      const edges = random3Regular(n, `bench-${n}`);
      const diag = maxCutDiagonal(n, edges);
      const prepared = prepareDiagonal(diag, { shared: true });
      const ours = fastAt.get(n) ?? time(21, () => qaoaExpectation(n, prepared, GAMMAS, BETAS)).seconds;
      const want = qaoaExpectation(n, prepared, GAMMAS, BETAS);
      const gbg = time(3, () => gateByGate(n, edges, diag));
      const peer = quantumCircuit(Qc, n, edges, diag);
      const [direct, reversed] = peer.value as unknown as [number, number];
      const matched = Math.abs(direct - want) < 1e-8 ? 'bit order direct' : Math.abs(reversed - want) < 1e-8 ? 'wires reversed' : null;
      if (!matched) throw new Error(`quantum-circuit expectation ${direct}/${reversed} differs from ours ${want}`);
      console.log(
        `| ${n} | ${fmtS(peer.seconds)} | ${fmtS(ours)} | ${Math.round(peer.seconds / ours)}× | ${fmtS(gbg.seconds)} | ${Math.round(peer.seconds / gbg.seconds)}× |`,
      );
      console.error(`quantum-circuit n=${n}: ⟨C⟩ agrees with ours (${matched})`);
    }
    await shutdownQaoaTeam();
  }
}

await main();
