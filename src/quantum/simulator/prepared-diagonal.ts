/**
 * A cost diagonal prepared once per problem instance for repeated QAOA evaluation.
 * When the diagonal takes at most 65536 distinct values (MaxCut, integer QUBOs, most
 * combinatorial costs) it is stored as a Uint16 index into a table of those values: a cost layer
 * then needs only one table of e^{-iγv} per layer (no per-element trig), and reads 2 bytes per
 * amplitude instead of 8. Otherwise the raw Float64 diagonal is kept.
 * The arrays may live in shared memory so worker threads read them in place.
 */
export interface PreparedDiagonal {
  readonly qubits: number;
  /** Distinct values (compressed form); empty when `raw` is used. */
  readonly values: Float64Array;
  /** values[index[z]] is the cost of basis state z; null when `raw` is used. */
  readonly index: Uint16Array | null;
  /** The diagonal itself when it has too many distinct values to compress. */
  readonly raw: Float64Array | null;
  readonly min: number;
  readonly max: number;
}

export const MAX_TABLE_VALUES = 65536;

export function isPreparedDiagonal(d: Float64Array | PreparedDiagonal): d is PreparedDiagonal {
  return !(d instanceof Float64Array);
}

function sharedOrPlain<T extends Float64Array | Uint16Array>(
  ctor: { new (buffer: ArrayBufferLike): T; new (length: number): T; BYTES_PER_ELEMENT: number },
  length: number,
  shared: boolean,
): T {
  return shared ? new ctor(new SharedArrayBuffer(length * ctor.BYTES_PER_ELEMENT)) : new ctor(length);
}

/**
 * Compresses `diag` (length 2^n) into an index + value table when it can, in one or two passes.
 * Integer diagonals spanning < 65536 take the fast path (index = value - min); others are
 * deduplicated through a Map, giving up at MAX_TABLE_VALUES distinct values.
 */
export function prepareDiagonal(diag: Float64Array, options: { shared?: boolean } = {}): PreparedDiagonal {
  const size = diag.length;
  const qubits = Math.log2(size);
  if (!Number.isInteger(qubits)) throw new RangeError(`diagonal length ${size} is not a power of two`);
  const shared = options.shared ?? false;
  let min = Infinity;
  let max = -Infinity;
  let integral = true;
  for (let z = 0; z < size; z++) {
    const v = diag[z]!;
    if (!Number.isFinite(v)) throw new RangeError(`diagonal entry ${z} is not finite (${v})`);
    if (v < min) min = v;
    if (v > max) max = v;
    if (integral && !Number.isInteger(v)) integral = false;
  }
  if (integral && max - min < MAX_TABLE_VALUES) {
    const span = max - min + 1;
    const values = new Float64Array(span);
    for (let k = 0; k < span; k++) values[k] = min + k;
    const index = sharedOrPlain(Uint16Array, size, shared);
    for (let z = 0; z < size; z++) index[z] = diag[z]! - min;
    return { qubits, values, index, raw: null, min, max };
  }
  const seen = new Map<number, number>();
  const index = sharedOrPlain(Uint16Array, size, shared);
  let ok = true;
  for (let z = 0; z < size; z++) {
    const v = diag[z]!;
    let k = seen.get(v);
    if (k === undefined) {
      if (seen.size >= MAX_TABLE_VALUES) {
        ok = false;
        break;
      }
      k = seen.size;
      seen.set(v, k);
    }
    index[z] = k;
  }
  if (ok) {
    const values = new Float64Array(seen.size);
    for (const [v, k] of seen) values[k] = v;
    return { qubits, values, index, raw: null, min, max };
  }
  let raw = diag;
  if (shared && !(diag.buffer instanceof SharedArrayBuffer)) {
    raw = sharedOrPlain(Float64Array, size, true);
    raw.set(diag);
  }
  return { qubits, values: new Float64Array(0), index: null, raw, min, max };
}

/** The value of the prepared diagonal at basis state z. */
export function diagonalValue(d: PreparedDiagonal, z: number): number {
  return d.index ? d.values[d.index[z]!]! : d.raw![z]!;
}
