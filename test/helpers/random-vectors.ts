/** Test vectors for the vector indexes: unit length, deterministic. */
export function unit(values: number[]): Float32Array {
  const norm = Math.hypot(...values);
  return Float32Array.from(values, (v) => v / norm);
}

/** Deterministic pseudo-random unit vectors (mulberry32), all views into one buffer at an offset. */
export function randomVectors(count: number, dims: number, seed: number): Float32Array[] {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296 - 0.5;
  };
  // Views at a non-zero byteOffset on purpose: usearch's binding ignores byteOffset, and the
  // space library hands the index views of SQLite blobs.
  const buffer = new Float32Array((count + 1) * dims);
  return Array.from({ length: count }, (_, i) => {
    const view = buffer.subarray((i + 1) * dims, (i + 2) * dims);
    view.set(unit(Array.from({ length: dims }, next)));
    return view;
  });
}
