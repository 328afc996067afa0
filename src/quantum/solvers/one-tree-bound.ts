/**
 * The Held-Karp lower bound on the shortest closed tour through `nodes` (indices into `dist`,
 * symmetric): the best 1-tree under node penalties π, found by subgradient ascent
 * (Held & Karp 1971, Volgenant & Jonker's step rule). A 1-tree is a minimum spanning tree of
 * every node but the first plus the first node's two cheapest edges; every tour is a 1-tree,
 * so its weight under any π, minus 2·Σπ, never exceeds the optimum. Time windows and distance
 * limits only remove tours, so the bound holds for them too (it just gets looser).
 *
 * `upperBound` (a known tour's length) sizes the steps. O(N²) per iteration (Prim on the
 * dense matrix), at most `iterations` iterations.
 */
export function oneTreeBound(dist: readonly (readonly number[])[], nodes: readonly number[], upperBound: number, iterations = 400): number {
  const n = nodes.length;
  if (n <= 1) return 0;
  if (n === 2) return 2 * dist[nodes[0]!]![nodes[1]!]!;
  const d = new Float64Array(n * n);
  for (let a = 0; a < n; a++) for (let b = 0; b < n; b++) d[a * n + b] = dist[nodes[a]!]![nodes[b]!]!;
  const pi = new Float64Array(n);
  const degree = new Int32Array(n);
  const key = new Float64Array(n);
  const link = new Int32Array(n);
  const inTree = new Uint8Array(n);
  let best = -Infinity;
  let lambda = 2;
  let sinceImproved = 0;
  const patience = Math.max(10, Math.ceil(n / 4));
  for (let iter = 0; iter < iterations && lambda > 1e-6; iter++) {
    degree.fill(0);
    inTree.fill(0);
    key.fill(Infinity);
    // Prim over nodes 1..n-1
    let weight = 0;
    key[1] = 0;
    link[1] = -1;
    for (let added = 0; added < n - 1; added++) {
      let u = -1;
      for (let v = 1; v < n; v++) if (inTree[v] === 0 && (u < 0 || key[v]! < key[u]!)) u = v;
      inTree[u] = 1;
      weight += key[u]!;
      if (link[u]! >= 0) {
        degree[u]!++;
        degree[link[u]!]!++;
      }
      for (let v = 1; v < n; v++) {
        if (inTree[v] !== 0) continue;
        const w = d[u * n + v]! + pi[u]! + pi[v]!;
        if (w < key[v]!) {
          key[v] = w;
          link[v] = u;
        }
      }
    }
    // node 0's two cheapest edges
    let first = -1;
    let second = -1;
    for (let v = 1; v < n; v++) {
      const w = d[v]! + pi[0]! + pi[v]!;
      if (first < 0 || w < d[first]! + pi[0]! + pi[first]!) {
        second = first;
        first = v;
      } else if (second < 0 || w < d[second]! + pi[0]! + pi[second]!) second = v;
    }
    weight += d[first]! + pi[0]! + pi[first]! + (d[second]! + pi[0]! + pi[second]!);
    degree[0] = 2;
    degree[first]!++;
    degree[second]!++;
    let penaltySum = 0;
    let norm = 0;
    for (let v = 0; v < n; v++) {
      penaltySum += pi[v]!;
      norm += (degree[v]! - 2) ** 2;
    }
    const bound = weight - 2 * penaltySum;
    if (bound > best + 1e-12) {
      best = bound;
      sinceImproved = 0;
    } else if (++sinceImproved >= patience) {
      lambda /= 2;
      sinceImproved = 0;
    }
    // every degree 2: the 1-tree is a tour, so the bound is the optimum
    if (norm === 0) break;
    const step = (lambda * Math.max(upperBound - bound, 1e-9 * Math.abs(upperBound))) / norm;
    for (let v = 0; v < n; v++) pi[v] = pi[v]! + step * (degree[v]! - 2);
  }
  // rounding in the sums must not lift the bound above a tour of the same length
  return best - 1e-9 * Math.abs(best);
}
