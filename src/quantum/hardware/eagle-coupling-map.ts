/**
 * The coupling map of IBM's 127-qubit Eagle r3 processors (ibm_brisbane, ibm_sherbrooke,
 * ibm_kyiv, …; the same heavy-hex lattice as Eagle r1's ibm_washington), generated rather than
 * copied. Source of the layout: the `coupling_map` these backends publish in their configuration
 * (also in qiskit-ibm-runtime's fake backends, e.g. FakeSherbrooke's conf_sherbrooke.json): seven
 * rows of qubits — 14, then five of 15, then 14 — joined by six rows of four "bridge" qubits, each
 * bridge coupled to one qubit above and one below. That gives 127 qubits and 144 couplers.
 *
 * Edges are undirected here: Eagle's two-qubit gate (ECR) is calibrated in one direction per
 * coupler, and which one differs between devices and calibrations, so the transpiler accepts a
 * directed map too (isa-transpiler.ts turns an ECR around with single-qubit gates).
 */
export const EAGLE_QUBITS = 127;

/** First qubit of each of the seven long rows, and their lengths. */
const ROWS: readonly { start: number; length: number }[] = [
  { start: 0, length: 14 },
  { start: 18, length: 15 },
  { start: 37, length: 15 },
  { start: 56, length: 15 },
  { start: 75, length: 15 },
  { start: 94, length: 15 },
  { start: 113, length: 14 },
];

/**
 * Bridge qubits between row r and r+1 are numbered right after row r (14, 33, 52, 71, 90, 109);
 * each couples a column of row r to a column of row r+1 (the comments list the published triples).
 * Heavy-hex alternates: bridges hang under columns 0, 4, 8, 12 of even rows and 2, 6, 10, 14 of odd
 * rows; the last row is one qubit shorter on the left, hence its columns 1, 5, 9, 13.
 */
const BRIDGE_COLUMNS: readonly { upper: readonly number[]; lower: readonly number[] }[] = [
  { upper: [0, 4, 8, 12], lower: [0, 4, 8, 12] }, // row 0 → row 1: 0-14-18, 4-15-22, 8-16-26, 12-17-30
  { upper: [2, 6, 10, 14], lower: [2, 6, 10, 14] }, // row 1 → row 2: 20-33-39, 24-34-43, 28-35-47, 32-36-51
  { upper: [0, 4, 8, 12], lower: [0, 4, 8, 12] }, // row 2 → row 3: 37-52-56, 41-53-60, 45-54-64, 49-55-68
  { upper: [2, 6, 10, 14], lower: [2, 6, 10, 14] }, // row 3 → row 4: 58-71-77, 62-72-81, 66-73-85, 70-74-89
  { upper: [0, 4, 8, 12], lower: [0, 4, 8, 12] }, // row 4 → row 5: 75-90-94, 79-91-98, 83-92-102, 87-93-106
  { upper: [2, 6, 10, 14], lower: [1, 5, 9, 13] }, // row 5 → row 6: 96-109-114, 100-110-118, 104-111-122, 108-112-126
];

/** The 144 couplers of Eagle r3 as undirected pairs [a, b] with a < b. */
export function eagleCouplingMap(): [number, number][] {
  const edges: [number, number][] = [];
  for (const row of ROWS) for (let k = 0; k + 1 < row.length; k++) edges.push([row.start + k, row.start + k + 1]);
  BRIDGE_COLUMNS.forEach((columns, r) => {
    const upper = ROWS[r]!;
    const lower = ROWS[r + 1]!;
    const firstBridge = upper.start + upper.length;
    columns.upper.forEach((column, k) => {
      const bridge = firstBridge + k;
      edges.push([upper.start + column, bridge], [bridge, lower.start + columns.lower[k]!]);
    });
  });
  return edges.map(([a, b]) => (a < b ? [a, b] : [b, a]));
}
