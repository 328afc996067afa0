/** Small problems shared by the solve tests (and the bench). */
export const berlinNodes = [
  { id: 'depot', lat: 52.52, lng: 13.405 },
  { id: 'a', lat: 52.53, lng: 13.42 },
  { id: 'b', lat: 52.5, lng: 13.45 },
  { id: 'c', lat: 52.48, lng: 13.39 },
  { id: 'd', lat: 52.51, lng: 13.36 },
  { id: 'e', lat: 52.55, lng: 13.3 },
  { id: 'f', lat: 52.45, lng: 13.5 },
];

export function routeProblem(stops = 3, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    type: 'route_optimization',
    nodes: berlinNodes.slice(0, stops + 1),
    constraints: { max_distance_km: 100, vehicle_count: 1 },
    ...extra,
  };
}

export const portfolioAssets = [
  { id: 'AAA', expected_return: 0.12, risk: 0.25 },
  { id: 'BBB', expected_return: 0.08, risk: 0.12 },
  { id: 'CCC', expected_return: 0.1, risk: 0.18 },
  { id: 'DDD', expected_return: 0.05, risk: 0.05 },
  { id: 'EEE', expected_return: 0.15, risk: 0.35 },
  { id: 'FFF', expected_return: 0.07, risk: 0.1 },
];

export function portfolioProblem(constraints = { max_assets: 3, max_risk: 0.15, min_return: 0.08 }): Record<string, unknown> {
  return { type: 'portfolio_allocation', assets: portfolioAssets, constraints };
}

export function patternProblem(records = 64, needle = 37): Record<string, unknown> {
  const lines = Array.from({ length: records }, (_, i) => (i === needle ? `order-${i} status=FRAUD` : `order-${i} status=ok`));
  return { type: 'pattern_search', dataset: lines.join('\n'), target: { pattern: 'FRAUD', min_confidence: 0.5 }, search_space_size: records };
}

/** Deterministic gaussian blobs (Box–Muller on a tiny LCG). */
export function blobs(centers: Record<string, number[]>, perClass: number, spread: number, seed = 1): { label: string; features: number[] }[] {
  let state = seed >>> 0;
  const uniform = (): number => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return (state + 0.5) / 4294967296;
  };
  const gauss = (): number => Math.sqrt(-2 * Math.log(uniform())) * Math.cos(2 * Math.PI * uniform());
  return Object.entries(centers).flatMap(([label, c]) => Array.from({ length: perClass }, () => ({ label, features: c.map((v) => v + spread * gauss()) })));
}

/** A seeded portfolio of n assets: one qubit each, so up to the solver's 24-asset ceiling it is a QAOA on n qubits. */
export function portfolioOf(n: number, seed: number): Record<string, unknown> {
  let s = seed >>> 0;
  const rand = () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return (s + 0.5) / 4294967296;
  };
  const assets = Array.from({ length: n }, (_, i) => ({ id: `A${i}`, expected_return: 0.02 + 0.15 * rand(), risk: 0.05 + 0.3 * rand() }));
  return { type: 'portfolio_allocation', assets, constraints: { max_assets: Math.ceil(n / 3), max_risk: 0.2, min_return: 0.06 } };
}
