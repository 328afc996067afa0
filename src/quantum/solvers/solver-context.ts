import type { Rng } from '../simulator/rng.ts';

/** What every solver receives besides its problem. */
export interface SolverContext {
  /** Measurement shots per circuit the solver samples. */
  shots: number;
  /** Measurement randomness: seeded when the request carried `seed`, the OS CSPRNG otherwise. */
  rng: Rng;
  /** Simulator threads per QAOA evaluation; unset lets the simulator decide (both cores from 16 qubits). */
  threads?: number | undefined;
}
