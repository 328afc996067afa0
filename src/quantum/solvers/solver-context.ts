import type { Circuit } from '../simulator/circuit.ts';
import type { Rng } from '../simulator/rng.ts';

/** What every solver receives besides its problem. */
export interface SolverContext {
  /** Measurement shots per circuit the solver samples. */
  shots: number;
  /** Measurement randomness: seeded when the request carried `seed`, the OS CSPRNG otherwise. */
  rng: Rng;
  /** Simulator threads per QAOA evaluation; unset lets the simulator decide (both cores from 16 qubits). */
  threads?: number | undefined;
  /**
   * Where the final circuit's shots come from instead of the simulated state: the hardware
   * substrate (src/quantum/hardware) runs the circuit on a provider and returns its counts
   * (basis index → shots). Unset: sampled from the simulator's state.
   */
  sample?: ((circuit: Circuit) => Map<number, number>) | undefined;
}
