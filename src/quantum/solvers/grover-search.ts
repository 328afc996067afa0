import v8 from 'node:v8';
import { ApiError } from '../../shared/api-error.ts';
import { sliceWhole } from '../../shared/quote-input.ts';
import { Circuit } from '../simulator/circuit.ts';
import { sampleCounts } from '../simulator/measure.ts';
import { assertFits, maxQubits } from '../simulator/memory-guard.ts';
import { StateVector } from '../simulator/state-vector.ts';
import type { PatternSearchProblem, SolverOutput } from '../solve-schemas.ts';
import { summarizeCircuit } from './circuit-summary.ts';
import { countsFields, measurementCounts } from './measurement-counts.ts';
import { roundDown } from './safe-rounding.ts';
import type { SolverContext } from './solver-context.ts';

/**
 * grover / pattern_search. `dataset` holds one record per line (LF or CRLF; one trailing newline
 * does not make an extra record). Record r matches when `target.pattern` occurs in it as a
 * case-sensitive substring, or, written as `/source/flags`, when that JavaScript regular
 * expression matches — run on V8's linear-time engine (no backreferences or lookarounds; see
 * recordMatcher), so no pattern can make matching exponential. The oracle marks the matching indices of the ⌈log2 N⌉-qubit register
 * (N = search_space_size ≥ record count; indices past the last record are empty and never match).
 *
 * Grover: H on every qubit, then k = ⌊π/4·√(N/M)⌋ rounds of oracle + diffusion (H X MCZ X H),
 * then `shots` measurements. M, the number of marked records, is what the oracle marks: on a
 * simulator it is known once the oracle is built (no quantum counting is run). The simulation
 * applies each round as its exact effect — a sign flip of the marked amplitudes and a reflection
 * about the mean, O(2^n) per round — which tests check equals running the gate circuit.
 */

/**
 * Above this many qubits the k·2^n simulation (k ≈ π/4·√(2^n) rounds, one sweep each) is too slow
 * for a request: a classical scan answers. Measured on a busy 2-core box (docs/solvers.md): 22
 * qubits in about 6 s; 23 took 25 s and 24 took 90 s, too near the 120 s job limit.
 */
export const GROVER_MAX_QUBITS = 22;
/** The gate-level circuit is materialised up to this many ops; beyond, the oracle is one labelled diagonal. */
const MAX_GATE_OPS = 200_000;

export function splitRecords(dataset: string): string[] {
  const lines = dataset.split('\n').map((l) => (l.endsWith('\r') ? l.slice(0, -1) : l));
  if (lines.length > 1 && lines[lines.length - 1] === '') lines.pop();
  return lines;
}

/**
 * V8's linear-time regular-expression engine (flag `l`): matching time is linear in the record
 * length whatever the pattern, so a user pattern such as /(a+)+$/ cannot tie up a worker. It
 * refuses what it cannot run in linear time (backreferences, lookarounds), and so do we.
 */
let linearEngine: boolean | undefined;
function linearRegexAvailable(): boolean {
  if (linearEngine === undefined) {
    try {
      v8.setFlagsFromString('--enable-experimental-regexp-engine');
      linearEngine = new RegExp('a', 'l').flags.includes('l');
    } catch {
      linearEngine = false;
    }
  }
  return linearEngine;
}

/**
 * The linear engine has no `i` flag: `caseFoldAscii` rewrites a source so each ASCII letter
 * matches both cases ('a' → [aA] outside classes; a class gets the swapped-case copy of its
 * unescaped letters). Escapes (\d, \x4a, \u00e9, \cJ) and group names are left alone.
 */
export function caseFoldAscii(source: string): string {
  const swap = (c: string): string => (c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase());
  const isLetter = (c: string): boolean => /^[A-Za-z]$/.test(c);
  /** Length of the escape starting at source[i] === '\\'. */
  const escapeLength = (i: number): number => {
    const next = source[i + 1];
    if (next === 'x') return 4;
    if (next === 'u') return source[i + 2] === '{' ? source.indexOf('}', i) - i + 1 || 2 : 6;
    if (next === 'c') return 3;
    if ((next === 'p' || next === 'P' || next === 'k') && source[i + 2] === '{') return source.indexOf('}', i) - i + 1 || 2;
    return 2;
  };
  let out = '';
  let i = 0;
  while (i < source.length) {
    const c = source[i]!;
    if (c === '\\') {
      const n = escapeLength(i);
      out += source.slice(i, i + n);
      i += n;
    } else if (c === '[') {
      let j = i + 1;
      let body = '';
      let extra = '';
      if (source[j] === '^') {
        body += '^';
        j++;
      }
      while (j < source.length && source[j] !== ']') {
        if (source[j] === '\\') {
          const n = escapeLength(j);
          body += source.slice(j, j + n);
          j += n;
          continue;
        }
        const ch = source[j]!;
        body += ch;
        if (isLetter(ch)) extra += swap(ch);
        else if (ch === '-' && extra.length > 0 && isLetter(source[j + 1] ?? '')) extra += '-';
        j++;
      }
      out += `[${body}${extra}]`;
      i = j + 1;
    } else if (c === '(' && source[i + 1] === '?' && source[i + 2] === '<' && source[i + 3] !== '=' && source[i + 3] !== '!') {
      const end = source.indexOf('>', i);
      out += source.slice(i, end + 1);
      i = end + 1;
    } else {
      out += isLetter(c) ? `[${c}${swap(c)}]` : c;
      i++;
    }
  }
  return out;
}

export function recordMatcher(pattern: string): (record: string) => boolean {
  const regex = /^\/(.+)\/([dgimsuvy]*)$/s.exec(pattern);
  if (regex === null) return (record) => record.includes(pattern);
  const refuse = (why: string): never => {
    throw ApiError.unprocessable(`Invalid 'problem.target.pattern': ${why}`, 'problem.target.pattern');
  };
  if (!linearRegexAvailable()) refuse('regular expressions need a linear-time engine this runtime lacks; send a literal substring instead');
  let re: RegExp | undefined;
  try {
    const flags = regex[2]!;
    if (/[uv]/.test(flags)) refuse('the u and v flags are not supported (the linear-time engine lacks them)');
    const source = flags.includes('i') ? caseFoldAscii(regex[1]!) : regex[1]!;
    re = new RegExp(source, `${flags.replace(/[gydi]/g, '')}l`);
  } catch (error) {
    const message = (error as Error).message;
    refuse(/linear time/i.test(message) ? `${message} (backreferences and lookarounds are not accepted: every pattern must match in time linear in the record)` : message);
  }
  const compiled = re!;
  return (record) => compiled.test(record);
}

export function groverIterations(size: number, marked: number): number {
  return Math.floor((Math.PI / 4) * Math.sqrt(size / Math.max(1, marked)));
}

/** The Grover circuit as gates: oracle = X on the 0-bits, MCZ, X again, per marked index. */
export function groverCircuit(qubits: number, marked: readonly number[], iterations: number, oracleDiagonal?: Float64Array): Circuit {
  const c = new Circuit(qubits);
  const all = [...Array(qubits).keys()];
  for (const q of all) c.h(q);
  for (let k = 0; k < iterations; k++) {
    if (oracleDiagonal !== undefined) {
      c.diagonal(oracleDiagonal, Math.PI, 'oracle');
    } else {
      for (const z of marked) {
        const zeros = all.filter((q) => ((z >> q) & 1) === 0);
        for (const q of zeros) c.x(q);
        c.mcz(all);
        for (const q of zeros) c.x(q);
      }
    }
    for (const q of all) c.h(q);
    for (const q of all) c.x(q);
    c.mcz(all);
    for (const q of all) c.x(q);
    for (const q of all) c.h(q);
  }
  return c.measureAll();
}

/** Runs Grover by its exact effect per round (see the file comment); returns the final state. */
export function groverState(qubits: number, marked: readonly number[], iterations: number): StateVector {
  const s = StateVector.uniform(qubits);
  const re = s.re;
  const size = re.length;
  // One sweep per round: the oracle's flips change the sum only at the marked indices, and the
  // reflection pass sums what it writes, so the mean is never a separate pass over the state.
  let sum = 0;
  for (let i = 0; i < size; i++) sum += re[i]!;
  for (let k = 0; k < iterations; k++) {
    for (const z of marked) {
      sum -= 2 * re[z]!;
      re[z] = -re[z]!;
    }
    const twiceMean = (2 * sum) / size;
    let next = 0;
    for (let i = 0; i < size; i++) {
      const v = twiceMean - re[i]!;
      re[i] = v;
      next += v;
    }
    sum = next;
  }
  // The diffusion above is 2|s⟩⟨s| - I; the gate form H X MCZ X H equals I - 2|s⟩⟨s| (a global
  // phase of -1 per round), which no measurement can see. Match the circuit's sign anyway.
  if (iterations % 2 === 1) for (let i = 0; i < size; i++) re[i] = -re[i]!;
  return s;
}

export function solvePatternSearch(problem: PatternSearchProblem, ctx: SolverContext): SolverOutput {
  const records = splitRecords(problem.dataset);
  const size = problem.search_space_size;
  if (size < records.length) {
    throw ApiError.unprocessable(
      `Invalid 'problem.search_space_size': the dataset has ${records.length} records, so the search space must be at least ${records.length}`,
      'problem.search_space_size',
    );
  }
  const matches = recordMatcher(problem.target.pattern);
  const marked: number[] = [];
  records.forEach((r, i) => {
    if (matches(r)) marked.push(i);
  });
  // Grover amplifies only while the marked fraction is small: with M ≥ N/2 one round does
  // nothing (at M = N/2 it leaves the uniform state). The register is widened until M ≤ N/4; the
  // added indices are empty and never match.
  const recordQubits = Math.max(1, Math.ceil(Math.log2(size)));
  const qubits = Math.max(recordQubits, marked.length === 0 ? 0 : Math.ceil(Math.log2(4 * marked.length)));
  const minConfidence = problem.target.min_confidence;
  const base = { match_count: marked.length, search_space_size: size, records: records.length };

  if (qubits > Math.min(GROVER_MAX_QUBITS, maxQubits())) {
    // A linear scan is the exact classical answer; confidence is 1 when something matched.
    const found = marked.length > 0 && minConfidence <= 1;
    return {
      solution: {
        method: 'classical_scan', reason: `${qubits} qubits exceed the Grover simulation ceiling of ${Math.min(GROVER_MAX_QUBITS, maxQubits())}`, found, target_index: found ? marked[0]! : -1, confidence: found ? 1 : 0, ...base, qubits,
        ...countsFields(problem.options, () => 'no circuit ran: a classical scan answered (the register exceeds the Grover simulation ceiling)'),
      },
      // no circuit ran: nothing was minimised, so the energy is 0
      meta: { shots: 0, optimal_count: 0, energy: 0, depth: 0 },
    };
  }
  if (marked.length === 0) {
    // The oracle marks nothing: Grover would only rotate the uniform state onto itself, so no
    // round is run and nothing is sampled.
    return {
      solution: {
        method: 'grover', found: false, target_index: -1, confidence: 0, reason: 'no record matches the pattern (the oracle marks nothing, so no Grover iterations were run)', ...base, qubits, iterations: 0, success_probability: 0,
        ...countsFields(problem.options, () => 'no circuit was sampled: no record matches the pattern'),
      },
      meta: { shots: 0, optimal_count: 0, energy: 0, depth: 0 },
    };
  }
  assertFits(qubits, 2);
  const iterations = groverIterations(2 ** qubits, marked.length);
  const state = groverState(qubits, marked, iterations);
  let successProbability = 0;
  for (const z of marked) successProbability += state.re[z]! ** 2;
  const gateOps = iterations * (marked.length * (2 * qubits + 1) + 4 * qubits + 1);
  let oracle: Float64Array | undefined;
  if (gateOps > MAX_GATE_OPS) {
    oracle = new Float64Array(2 ** qubits);
    for (const z of marked) oracle[z] = 1;
  }
  const circuit = groverCircuit(qubits, marked, iterations, oracle);
  let summary;
  try {
    summary = summarizeCircuit(circuit, problem.options?.include_qasm);
  } catch {
    summary = { ...summarizeCircuit(circuit, false), qasm: null, qasm_unavailable: 'the oracle is kept as one diagonal layer at this size' };
  }
  // On the hardware substrate the shots come from the provider running this circuit.
  const counts = ctx.sample?.(circuit) ?? sampleCounts(state, ctx.shots, ctx.rng);
  const markedSet = new Set(marked);
  let hits = 0;
  let target = -1;
  for (const [z, c] of counts) {
    if (!markedSet.has(z)) continue;
    hits += c;
    if (target < 0 || c > counts.get(target)! || (c === counts.get(target)! && z < target)) target = z;
  }
  // reported exactly; the reason below rounds it down, so it never reads as reaching min_confidence
  const confidence = hits / ctx.shots;
  const found = target >= 0 && confidence >= minConfidence;

  const solution: Record<string, unknown> = {
    method: 'grover',
    found,
    target_index: found ? target : -1,
    confidence,
    ...(found ? { record: sliceWhole(records[target]!, 1000) } : { reason: marked.length === 0 ? 'no record matches the pattern' : `confidence ${roundDown(confidence, 4)} is below min_confidence ${minConfidence}` }),
    ...base,
    qubits,
    ...(qubits > recordQubits ? { register_widened: `${qubits - recordQubits} qubit(s) added so that the ${marked.length} matches are at most a quarter of the ${2 ** qubits} indices` } : {}),
    iterations,
    success_probability: successProbability,
    oracle: oracle === undefined ? 'gates' : 'diagonal',
    circuit: summary,
    // An outcome past the last record is an empty slot of the register: no record to show.
    ...countsFields(problem.options, (limit) => measurementCounts(counts, qubits, limit, markedSet, (z) => ({ record: z < records.length ? sliceWhole(records[z]!, 200) : null }))),
  };
  return {
    solution,
    meta: { shots: ctx.shots, optimal_count: target >= 0 ? counts.get(target)! : 0, energy: -successProbability, depth: summary.depth },
  };
}
