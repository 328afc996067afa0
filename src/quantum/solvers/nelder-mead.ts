/**
 * Derivative-free minimisation (Nelder–Mead simplex, standard coefficients 1, 2, ½, ½) for
 * the handful of QAOA angles. Deterministic: same start, same path.
 */
export interface NelderMeadOptions {
  /** Initial simplex edge per coordinate. */
  step?: number;
  maxEvaluations?: number;
  /** Stop when the simplex's values differ by less than this. */
  tolerance?: number;
}

export interface NelderMeadResult {
  x: number[];
  value: number;
  evaluations: number;
}

export function nelderMead(f: (x: readonly number[]) => number, x0: readonly number[], options: NelderMeadOptions = {}): NelderMeadResult {
  const step = options.step ?? 0.2;
  const maxEvaluations = options.maxEvaluations ?? 200;
  const tolerance = options.tolerance ?? 1e-7;
  const n = x0.length;
  let evaluations = 0;
  const evaluate = (x: number[]): { x: number[]; v: number } => {
    evaluations++;
    return { x, v: f(x) };
  };
  const simplex = [evaluate([...x0])];
  for (let i = 0; i < n; i++) {
    const x = [...x0];
    x[i] = x[i]! + step;
    simplex.push(evaluate(x));
  }
  const combine = (a: number[], b: number[], t: number): number[] => a.map((ai, i) => ai + t * (b[i]! - ai));
  while (evaluations < maxEvaluations) {
    simplex.sort((a, b) => a.v - b.v);
    const best = simplex[0]!;
    const worst = simplex[n]!;
    if (Math.abs(worst.v - best.v) <= tolerance * (Math.abs(best.v) + 1e-12)) break;
    const centroid = new Array<number>(n).fill(0);
    for (let k = 0; k < n; k++) for (let i = 0; i < n; i++) centroid[i] = centroid[i]! + simplex[k]!.x[i]! / n;
    const reflected = evaluate(combine(centroid, worst.x, -1));
    if (reflected.v < best.v) {
      const expanded = evaluate(combine(centroid, worst.x, -2));
      simplex[n] = expanded.v < reflected.v ? expanded : reflected;
    } else if (reflected.v < simplex[n - 1]!.v) {
      simplex[n] = reflected;
    } else {
      const outside = reflected.v < worst.v;
      const contracted = evaluate(combine(centroid, outside ? reflected.x : worst.x, 0.5));
      if (contracted.v < (outside ? reflected.v : worst.v)) {
        simplex[n] = contracted;
      } else {
        for (let k = 1; k <= n; k++) simplex[k] = evaluate(combine(best.x, simplex[k]!.x, 0.5));
      }
    }
  }
  simplex.sort((a, b) => a.v - b.v);
  return { x: simplex[0]!.x, value: simplex[0]!.v, evaluations };
}
