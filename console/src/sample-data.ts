/**
 * Example data for the solver forms: gaussian blobs from a fixed seed (Box–Muller on a small LCG),
 * so an example is the same on every load and its numbers can be read in the problem text.
 */
export function blobs(centres: readonly (readonly number[])[], perCentre: number, spread: number, seed: number): number[][] {
  let state = seed >>> 0;
  const uniform = (): number => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return (state + 0.5) / 4294967296;
  };
  const gauss = (): number => Math.sqrt(-2 * Math.log(uniform())) * Math.cos(2 * Math.PI * uniform());
  const round = (x: number): number => Math.round(x * 100) / 100;
  return centres.flatMap((c) => Array.from({ length: perCentre }, () => c.map((v) => round(v + spread * gauss()))));
}
