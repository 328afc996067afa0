/**
 * The vector index's scan (int8-vector-index.ts), compiled to column-scan.wasm by `npm run
 * build:kernels` (committed; test/spaces/column-scan.test.ts checks it is what this compiles to).
 *
 * A page holds `stride` rows as columns: dimension j's byte of every row, at page + j × stride.
 * Each byte is the row's 7-bit coarse value plus 64 (1 to 127), because the dot product used,
 * i32x4.relaxed_dot_i8x16_i7x16_add_s, is only the same on every platform when its second
 * operand's top bit is clear; then it is exact (pairs of products stay within 16 bits: 2 × 127 ×
 * 128 < 32,768). The +64 adds 64 × Σ weights to every row alike, which the caller's `bias` takes off.
 *
 * A query reads only the columns of its nonzero dimensions: the built-in embedder's question
 * vectors have 52–116 of 384 (p10–p90), so a scan reads a fifth of the bytes a row-by-row scan
 * does. They come in groups of four (the last padded with a zero weight): four columns of 16
 * rows are transposed in registers (eight byte shuffles) into four vectors of four rows by four
 * dimensions, each one relaxed dot with the group's four weights. Two groups go per pass over
 * the page's accumulators, which stay in the cache (4 bytes a row).
 */

// Four columns' next 16 rows, transposed and multiplied by the group's weights `w`, added to the accumulators at `acc`.
@inline function groupOf16(a: v128, b: v128, c: v128, d: v128, w: v128, acc: usize): void {
  const abLow = v128.shuffle<u8>(a, b, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
  const abHigh = v128.shuffle<u8>(a, b, 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
  const cdLow = v128.shuffle<u8>(c, d, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
  const cdHigh = v128.shuffle<u8>(c, d, 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
  v128.store(acc, i32x4.relaxed_dot_i8x16_i7x16_add_s(w, v128.shuffle<u8>(abLow, cdLow, 0, 1, 16, 17, 2, 3, 18, 19, 4, 5, 20, 21, 6, 7, 22, 23), v128.load(acc)));
  v128.store(acc, i32x4.relaxed_dot_i8x16_i7x16_add_s(w, v128.shuffle<u8>(abLow, cdLow, 8, 9, 24, 25, 10, 11, 26, 27, 12, 13, 28, 29, 14, 15, 30, 31), v128.load(acc, 16)), 16);
  v128.store(acc, i32x4.relaxed_dot_i8x16_i7x16_add_s(w, v128.shuffle<u8>(abHigh, cdHigh, 0, 1, 16, 17, 2, 3, 18, 19, 4, 5, 20, 21, 6, 7, 22, 23), v128.load(acc, 32)), 32);
  v128.store(acc, i32x4.relaxed_dot_i8x16_i7x16_add_s(w, v128.shuffle<u8>(abHigh, cdHigh, 8, 9, 24, 25, 10, 11, 26, 27, 12, 13, 28, 29, 14, 15, 30, 31), v128.load(acc, 48)), 48);
}

@inline function column(page: usize, stride: i32, columns: usize, at: i32): usize {
  return page + <usize>(load<i32>(columns + (<usize>at << 2)) * stride);
}

/**
 * Scores the first `rows` rows of the page at `page` (columns `stride` rows long, a multiple of
 * 16; `invNorm` the rows' 1 / |coarse row| as f32) against a query of `groups` groups: column
 * numbers at `columns` (4 i32 a group), weights at `weights` (16 bytes a group: its four weights,
 * four times). A row's score is (bias + Σ weight × byte) × invNorm, computed in f32 from the exact
 * integer sum. Writes each row scoring above `floor` (row number, score) to `outRows` and
 * `outScores`, in row order, and returns how many; `acc` is room for `stride` + 16 i32.
 */
export function scanPage(
  page: usize, stride: i32, rows: i32, invNorm: usize, columns: usize, weights: usize, groups: i32,
  bias: i32, floor: f32, acc: usize, outRows: usize, outScores: usize,
): i32 {
  const rows16 = (rows + 15) & ~15;
  const start = i32x4.splat(bias);
  for (let r = 0; r < rows16; r += 4) v128.store(acc + (<usize>r << 2), start);
  let g = 0;
  for (; g + 1 < groups; g += 2) {
    const c0 = column(page, stride, columns, g * 4), c1 = column(page, stride, columns, g * 4 + 1);
    const c2 = column(page, stride, columns, g * 4 + 2), c3 = column(page, stride, columns, g * 4 + 3);
    const c4 = column(page, stride, columns, g * 4 + 4), c5 = column(page, stride, columns, g * 4 + 5);
    const c6 = column(page, stride, columns, g * 4 + 6), c7 = column(page, stride, columns, g * 4 + 7);
    const w0 = v128.load(weights + (<usize>g << 4)), w1 = v128.load(weights + (<usize>g << 4), 16);
    for (let r = 0; r < rows16; r += 16) {
      const at = acc + (<usize>r << 2);
      const o = <usize>r;
      groupOf16(v128.load(c0 + o), v128.load(c1 + o), v128.load(c2 + o), v128.load(c3 + o), w0, at);
      groupOf16(v128.load(c4 + o), v128.load(c5 + o), v128.load(c6 + o), v128.load(c7 + o), w1, at);
    }
  }
  if (g < groups) {
    const c0 = column(page, stride, columns, g * 4), c1 = column(page, stride, columns, g * 4 + 1);
    const c2 = column(page, stride, columns, g * 4 + 2), c3 = column(page, stride, columns, g * 4 + 3);
    const w0 = v128.load(weights + (<usize>g << 4));
    for (let r = 0; r < rows16; r += 16) {
      const o = <usize>r;
      groupOf16(v128.load(c0 + o), v128.load(c1 + o), v128.load(c2 + o), v128.load(c3 + o), w0, acc + (o << 2));
    }
  }
  const above = f32x4.splat(floor);
  let found = 0;
  for (let r = 0; r < rows; r += 4) {
    const o = <usize>r << 2;
    const scores = f32x4.mul(f32x4.convert_i32x4_s(v128.load(acc + o)), v128.load(invNorm + o));
    const mask = i32x4.bitmask(f32x4.gt(scores, above));
    if (mask == 0) continue;
    for (let i = 0; i < 4; i++) {
      if ((mask & (1 << i)) == 0 || r + i >= rows) continue;
      const row = <usize>(r + i) << 2;
      store<i32>(outRows + (<usize>found << 2), r + i);
      store<f32>(outScores + (<usize>found << 2), <f32>load<i32>(acc + row) * load<f32>(invNorm + row));
      found++;
    }
  }
  return found;
}
