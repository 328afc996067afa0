import type { Circuit } from '../simulator/circuit.ts';

/** What `solution.circuit` carries: the circuit that ran, so depth and gate counts can be checked. */
export interface CircuitSummary {
  qubits: number;
  depth: number;
  gates: Record<string, number>;
  /** OpenQASM 3 text, when the problem asked for it with `options.include_qasm`. */
  qasm?: string | null;
  /** Why `qasm` is null: the circuit holds a diagonal layer with no gate decomposition. */
  qasm_unavailable?: string;
}

export function summarizeCircuit(circuit: Circuit, includeQasm: boolean | undefined): CircuitSummary {
  const summary: CircuitSummary = { qubits: circuit.qubits, depth: circuit.depth(), gates: { ...circuit.gateCounts() } };
  if (includeQasm === true) {
    try {
      summary.qasm = circuit.toQasm3();
    } catch (error) {
      summary.qasm = null;
      summary.qasm_unavailable = (error as Error).message;
    }
  }
  return summary;
}
