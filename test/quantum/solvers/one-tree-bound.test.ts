import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { haversineKm } from '../../../src/quantum/solvers/qaoa-route.ts';
import { oneTreeBound } from '../../../src/quantum/solvers/one-tree-bound.ts';
import { bruteForce, randomNodes, shortestTourKm } from './route-ground-truth.ts';

const matrix = (nodes: { lat: number; lng: number }[]): number[][] => nodes.map((a) => nodes.map((b) => haversineKm(a, b)));

describe('oneTreeBound', () => {
  it('never exceeds the optimum tour and comes close to it (seeded instances, 5–12 nodes)', () => {
    for (let seed = 1; seed <= 10; seed++) {
      const nodes = randomNodes(4 + seed, seed);
      const optimum = nodes.length <= 9 ? bruteForce(nodes).km : shortestTourKm(nodes);
      const bound = oneTreeBound(matrix(nodes), nodes.map((_, i) => i), optimum * 1.1);
      assert.ok(bound <= optimum + 1e-9, `seed ${seed}: bound ${bound} above optimum ${optimum}`);
      // the Held-Karp bound is typically within a few percent of the optimum on random points
      assert.ok(bound >= 0.9 * optimum, `seed ${seed}: bound ${bound} far below optimum ${optimum}`);
    }
  });

  it('is exact for points on a circle (the 1-tree becomes the tour)', () => {
    const nodes = Array.from({ length: 10 }, (_, i) => ({ lat: 48 + 0.05 * Math.sin((2 * Math.PI * i) / 10), lng: 11 + 0.075 * Math.cos((2 * Math.PI * i) / 10) }));
    const d = matrix(nodes);
    const perimeter = nodes.reduce((sum, _, i) => sum + d[i]![(i + 1) % 10]!, 0);
    const bound = oneTreeBound(d, nodes.map((_, i) => i), perimeter);
    assert.ok(bound <= perimeter + 1e-9 && bound >= perimeter * (1 - 1e-6), `bound ${bound} vs perimeter ${perimeter}`);
  });

  it('handles one and two nodes', () => {
    const d = [
      [0, 3],
      [3, 0],
    ];
    assert.equal(oneTreeBound(d, [0], 0), 0);
    assert.equal(oneTreeBound(d, [0, 1], 6), 6);
  });
});
