/**
 * cos and sin of one angle together, for the QAOA phase passes: a cost layer needs e^{-iγC(z)}
 * for up to 65 536 distinct costs per layer (the table), or for every amplitude (a raw diagonal),
 * and Math.cos + Math.sin each reduce the argument and evaluate a polynomial on their own. Here
 * the argument is reduced once (Cody–Waite, two parts of π/2) and both are evaluated on
 * [-π/4, π/4] with the minimax polynomials of fdlibm's __kernel_sin/__kernel_cos (the
 * algorithm V8's Math.sin/Math.cos use), then the quadrant picks signs and order. Error: a few
 * units in the last place for |a| ≤ 2^19 (tested against Math.sin/Math.cos); beyond that, where
 * two-part reduction would lose bits, it defers to Math.cos/Math.sin.
 *
 * The result goes into `out[at]` (cos) and `out[at + 1]` (sin): no allocation per call, and the
 * callers' loops stay monomorphic.
 */

const TWO_OVER_PI = 6.36619772367581382433e-1;
/** The first 33 bits of π/2: q·PIO2_HI is exact for |q| < 2^20. */
const PIO2_HI = 1.57079632673412561417;
/** π/2 - PIO2_HI. */
const PIO2_LO = 6.07710050650619224932e-11;
const REDUCTION_LIMIT = 2 ** 19;
const ROUND_SHIFT = 1.5 * 2 ** 52;
/** c and s of the current call, picked by index so the quadrant costs no unpredictable branch. */
const pick = new Float64Array(2);

// fdlibm k_sin.c / k_cos.c coefficients (minimax on [-π/4, π/4])
const S1 = -1.66666666666666324348e-1;
const S2 = 8.33333333332248946124e-3;
const S3 = -1.98412698298579493134e-4;
const S4 = 2.75573137070700676789e-6;
const S5 = -2.50507602534068634195e-8;
const S6 = 1.58969099521155010221e-10;
const C1 = 4.16666666666666019037e-2;
const C2 = -1.38888888888741095749e-3;
const C3 = 2.48015872894767294178e-5;
const C4 = -2.75573143513906633035e-7;
const C5 = 2.08757232129817482790e-9;
const C6 = -1.13596475577881948265e-11;

/** Writes cos(a) to out[at] and sin(a) to out[at + 1]. */
export function cosSinInto(a: number, out: Float64Array, at: number): void {
  if (!(Math.abs(a) <= REDUCTION_LIMIT)) {
    out[at] = Math.cos(a);
    out[at + 1] = Math.sin(a);
    return;
  }
  // round to nearest by the 1.5·2^52 shift (exact for |a·2/π| < 2^51), no call, no branch
  const q = a * TWO_OVER_PI + ROUND_SHIFT - ROUND_SHIFT;
  const r = a - q * PIO2_HI - q * PIO2_LO;
  const z = r * r;
  const s = r + r * z * (S1 + z * (S2 + z * (S3 + z * (S4 + z * (S5 + z * S6)))));
  // fdlibm k_cos: w = 1 - z/2, and the rounding error of w added back with the z²·P(z) tail
  const hz = 0.5 * z;
  const w = 1 - hz;
  const c = w + (1 - w - hz + z * z * (C1 + z * (C2 + z * (C3 + z * (C4 + z * (C5 + z * C6))))));
  // quadrant q mod 4: 0 → (c, s), 1 → (-s, c), 2 → (-c, -s), 3 → (s, -c)
  const quadrant = q & 3;
  const swap = quadrant & 1;
  pick[0] = c;
  pick[1] = s;
  out[at] = (1 - ((quadrant + 1) & 2)) * pick[swap]!;
  out[at + 1] = (1 - (quadrant & 2)) * pick[swap ^ 1]!;
}
