import { Circuit } from '../simulator/circuit.ts';
import { probabilities } from '../simulator/measure.ts';
import { cryptoRng, type Rng } from '../simulator/rng.ts';
import { StateVector } from '../simulator/state-vector.ts';
import type { QrngProblem, SolverOutput } from '../solve-schemas.ts';
import { summarizeCircuit } from './circuit-summary.ts';
import { countsFields } from './measurement-counts.ts';

/**
 * grover / qrng. A register of up to 16 qubits is put in uniform superposition by H gates on the
 * simulator and measured repeatedly; each shot yields one bit per qubit, concatenated in shot
 * order (qubit n-1 first). On a simulator the outcome of a measurement is a draw from the
 * state's distribution, so the randomness is exactly that of the draw: it always comes from the
 * OS CSPRNG (node:crypto), whatever `seed` says, and the answer says the substrate was simulated.
 * The request's `shots` does not apply: the shots used are ⌈bits / qubits⌉.
 */
export const QRNG_MAX_QUBITS = 16;

/** Measurement outcomes in shot order (sampleCounts only keeps counts, and order is the output here). */
function sampleSequence(state: StateVector, shots: number, rng: Rng): Uint32Array {
  const p = probabilities(state);
  const cumulative = new Float64Array(p.length);
  let sum = 0;
  for (let i = 0; i < p.length; i++) cumulative[i] = sum += p[i]!;
  const out = new Uint32Array(shots);
  for (let k = 0; k < shots; k++) {
    const u = rng.next() * sum;
    let lo = 0;
    let hi = p.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cumulative[mid]! > u) hi = mid;
      else lo = mid + 1;
    }
    out[k] = lo;
  }
  return out;
}

export function formatEntropy(bits: Uint8Array, count: number, format: QrngProblem['format']): string {
  if (format === 'binary') return Array.from(bits.subarray(0, count), String).join('');
  const bytes = Buffer.alloc(Math.ceil(count / 8));
  for (let i = 0; i < count; i++) if (bits[i] === 1) bytes[i >> 3] = bytes[i >> 3]! | (0x80 >> (i & 7));
  return bytes.toString(format);
}

export function solveQrng(problem: QrngProblem, _ctx: unknown, rng: Rng = cryptoRng()): SolverOutput {
  const qubits = Math.min(problem.bits, QRNG_MAX_QUBITS);
  const shots = Math.ceil(problem.bits / qubits);
  const circuit = new Circuit(qubits);
  for (let q = 0; q < qubits; q++) circuit.h(q);
  circuit.measureAll();
  const state = StateVector.zero(qubits);
  circuit.run(state);
  const outcomes = sampleSequence(state, shots, rng);
  const bits = new Uint8Array(shots * qubits);
  outcomes.forEach((z, k) => {
    for (let q = 0; q < qubits; q++) bits[k * qubits + q] = (z >> (qubits - 1 - q)) & 1;
  });
  const summary = summarizeCircuit(circuit, problem.options?.include_qasm);
  return {
    solution: {
      method: 'hadamard_measurement',
      entropy: formatEntropy(bits, problem.bits, problem.format),
      format: problem.format,
      bits: problem.bits,
      substrate: 'simulated',
      randomness_source: 'os_csprng',
      qubits,
      circuit: summary,
      ...countsFields(problem.options, () => 'the entropy is the measurements themselves: its bits are every outcome, in order'),
    },
    meta: { shots, optimal_count: 0, energy: 0, depth: summary.depth },
  };
}
