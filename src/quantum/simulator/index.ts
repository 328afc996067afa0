/**
 * The state-vector simulator: a library with no HTTP in it. See docs/simulator.md.
 */
export * from './state-vector.ts';
export * from './gates.ts';
export * from './measure.ts';
export * from './rng.ts';
export * from './memory-guard.ts';
export * from './diagonals.ts';
export * from './prepared-diagonal.ts';
export * from './qaoa.ts';
export * from './circuit.ts';
export * from './parallel.ts';
