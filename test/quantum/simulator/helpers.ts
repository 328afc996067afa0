import assert from 'node:assert/strict';
import type { StateVector } from '../../../src/quantum/simulator/index.ts';

/** Asserts two states are equal amplitude by amplitude (not just up to global phase). */
export function assertStatesClose(a: StateVector, b: StateVector, tol = 1e-12): void {
  assert.equal(a.qubits, b.qubits);
  for (let i = 0; i < a.size; i++) {
    assert.ok(Math.abs(a.re[i]! - b.re[i]!) <= tol && Math.abs(a.im[i]! - b.im[i]!) <= tol,
      `amplitude ${i}: (${a.re[i]}, ${a.im[i]}) vs (${b.re[i]}, ${b.im[i]})`);
  }
}

/** Asserts |<a|b>| = 1: the states are equal up to a global phase. */
export function assertSameUpToPhase(a: StateVector, b: StateVector, tol = 1e-12): void {
  let r = 0;
  let im = 0;
  for (let k = 0; k < a.size; k++) {
    r += a.re[k]! * b.re[k]! + a.im[k]! * b.im[k]!;
    im += a.re[k]! * b.im[k]! - a.im[k]! * b.re[k]!;
  }
  assert.ok(Math.abs(Math.hypot(r, im) - 1) <= tol, `overlap ${Math.hypot(r, im)}`);
}

/** Edges of the d-dimensional hypercube graph. */
export function hypercubeEdges(d: number): { i: number; j: number }[] {
  const edges: { i: number; j: number }[] = [];
  for (let a = 0; a < 2 ** d; a++) {
    for (let b = 0; b < d; b++) {
      const c = a ^ (1 << b);
      if (a < c) edges.push({ i: a, j: c });
    }
  }
  return edges;
}

/** A random d-regular-ish graph (each vertex gets d random partners), deterministic per seed. */
export function randomEdges(n: number, count: number, seed: number, weighted = false): { i: number; j: number; w: number }[] {
  let x = seed >>> 0 || 1;
  const rnd = (): number => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 4294967296;
  };
  const edges: { i: number; j: number; w: number }[] = [];
  const seen = new Set<string>();
  while (edges.length < count) {
    const i = Math.floor(rnd() * n);
    const j = Math.floor(rnd() * n);
    if (i === j || seen.has(`${Math.min(i, j)}-${Math.max(i, j)}`)) continue;
    seen.add(`${Math.min(i, j)}-${Math.max(i, j)}`);
    edges.push({ i, j, w: weighted ? Math.round(rnd() * 40 - 20) / 4 : 1 });
  }
  return edges;
}
