import { assertFits } from './memory-guard.ts';

/** A ZZ coupling w·s_i·s_j (s = 1 - 2b, so bit 0 ↦ +1 and bit 1 ↦ -1). */
export interface QuadraticTerm {
  i: number;
  j: number;
  w: number;
}

/** A local field h·s_i. */
export interface LinearTerm {
  i: number;
  h: number;
}

/** A weighted graph edge for MaxCut (weight defaults to 1). */
export interface Edge {
  i: number;
  j: number;
  w?: number;
}

function checkTermQubit(n: number, q: number): void {
  if (!Number.isInteger(q) || q < 0 || q >= n) throw new RangeError(`qubit ${q} out of range for ${n} qubits`);
}

function allocateDiagonal(n: number): Float64Array {
  // a diagonal is half a state vector (8 bytes per entry)
  assertFits(n, 0.5);
  return new Float64Array(2 ** n);
}

/**
 * Fills out[0 .. 2^k) with the linear form L(z) = Σ_{j<k} a[j]·v(bit j of z), where bit value 0
 * maps to v0 and 1 to v1, by doubling: O(2^k).
 */
function linearForm(out: Float64Array, k: number, a: Float64Array, v0: number, v1: number): void {
  let base = 0;
  for (let j = 0; j < k; j++) base += a[j]! * v0;
  out[0] = base;
  for (let j = 0; j < k; j++) {
    const delta = a[j]! * (v1 - v0);
    const half = 1 << j;
    for (let z = 0; z < half; z++) out[z + half] = out[z]! + delta;
  }
}

/**
 * Builds a diagonal over n variables that is a quadratic form, by doubling over the bits:
 * D[z + 2^k] = D[z] + flip_k + Σ_{j<k} c_jk·(v(b_j) difference), in O(2^n) total time with one
 * 2^(n-1) scratch array instead of O(2^n · terms).
 * `coupling[k*n + j]` (j < k) and `field[k]` describe how the value changes when bit k goes 0 → 1.
 */
function buildByDoubling(
  n: number,
  base: number,
  field: Float64Array,
  coupling: Float64Array,
  v0: number,
  v1: number,
): Float64Array {
  const d = allocateDiagonal(n);
  d[0] = base;
  const scratch = new Float64Array(n > 0 ? 2 ** (n - 1) : 1);
  for (let k = 0; k < n; k++) {
    const half = 1 << k;
    linearForm(scratch, k, coupling.subarray(k * n, k * n + k), v0, v1);
    const f = field[k]!;
    for (let z = 0; z < half; z++) d[z + half] = d[z]! + f + scratch[z]!;
  }
  return d;
}

/**
 * Ising energy for every basis state: with s_i = 1 - 2·b_i (bit 0 → +1, bit 1 → -1),
 * value(z) = constant + Σ h_i s_i + Σ w_ij s_i s_j. O(2^n + terms·n) time.
 */
export function isingDiagonal(
  n: number,
  quadratic: readonly QuadraticTerm[],
  linear: readonly LinearTerm[] = [],
  constant = 0,
): Float64Array {
  // sym[k*n + j] = total coupling between k and j (both orders summed)
  const sym = new Float64Array(n * n);
  const h = new Float64Array(n);
  let base = constant;
  for (const t of linear) {
    checkTermQubit(n, t.i);
    h[t.i] = h[t.i]! + t.h;
    base += t.h;
  }
  for (const t of quadratic) {
    checkTermQubit(n, t.i);
    checkTermQubit(n, t.j);
    if (t.i === t.j) {
      base += t.w; // s_i² = 1
      continue;
    }
    const hi = Math.max(t.i, t.j);
    const lo = Math.min(t.i, t.j);
    sym[hi * n + lo] = sym[hi * n + lo]! + t.w;
    base += t.w;
  }
  // flipping s_k from +1 to -1 (bit k: 0 → 1) with all higher bits still 0 (spins +1) changes
  // the value by -2h_k - 2 Σ_{j>k} w_jk - 2 Σ_{j<k} w_kj s_j: the first two are the field, the
  // last a coupling -2w_kj·s_j with s_j = +1 / -1 for b_j = 0 / 1.
  const field = new Float64Array(n);
  const coupling = new Float64Array(n * n);
  for (let k = 0; k < n; k++) {
    let f = -2 * h[k]!;
    for (let j = k + 1; j < n; j++) f -= 2 * sym[j * n + k]!;
    field[k] = f;
    for (let j = 0; j < k; j++) coupling[k * n + j] = -2 * sym[k * n + j]!;
  }
  return buildByDoubling(n, base, field, coupling, 1, -1);
}

/** value(z) = xᵀQx + offset for x = bits of z (x_i = bit i); Q is n×n row-major. */
export function quboDiagonal(n: number, q: Float64Array, offset = 0): Float64Array {
  if (q.length !== n * n) throw new RangeError(`Q must have ${n * n} entries, got ${q.length}`);
  const field = new Float64Array(n);
  const coupling = new Float64Array(n * n);
  for (let k = 0; k < n; k++) {
    field[k] = q[k * n + k]!;
    for (let j = 0; j < k; j++) coupling[k * n + j] = q[k * n + j]! + q[j * n + k]!;
  }
  return buildByDoubling(n, offset, field, coupling, 0, 1);
}

/** The Ising form of weighted MaxCut: cut(z) = Σ w/2 - Σ (w/2) s_i s_j. */
export function maxCutTerms(edges: readonly Edge[]): { quadratic: QuadraticTerm[]; constant: number } {
  let constant = 0;
  const quadratic: QuadraticTerm[] = [];
  for (const e of edges) {
    const w = e.w ?? 1;
    constant += w / 2;
    quadratic.push({ i: e.i, j: e.j, w: -w / 2 });
  }
  return { quadratic, constant };
}

/** Cut value of every partition z (vertex i on side bit i): Σ over edges with differing bits of w. */
export function maxCutDiagonal(n: number, edges: readonly Edge[]): Float64Array {
  for (const e of edges) {
    checkTermQubit(n, e.i);
    checkTermQubit(n, e.j);
    if (e.i === e.j) throw new RangeError(`self-loop on vertex ${e.i}`);
  }
  const { quadratic, constant } = maxCutTerms(edges);
  return isingDiagonal(n, quadratic, [], constant);
}
