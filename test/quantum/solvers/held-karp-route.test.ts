import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { HELD_KARP_MAX_STOPS, heldKarpRoute } from '../../../src/quantum/solvers/held-karp-route.ts';
import { bruteForce, check, randomNodes, randomWindows } from './route-ground-truth.ts';
import { idsOf, modelOf, stopsOf } from './route-test-model.ts';

describe('heldKarpRoute', () => {
  it('finds the brute-force optimum without time windows (seeded instances, 3–8 stops)', () => {
    for (let seed = 1; seed <= 12; seed++) {
      const nodes = randomNodes(3 + (seed % 6), seed);
      const result = heldKarpRoute(modelOf(nodes), stopsOf(nodes));
      assert.equal(result.kind, 'optimal');
      if (result.kind !== 'optimal') return;
      const truth = bruteForce(nodes).km;
      assert.ok(Math.abs(result.distanceKm - truth) < 1e-9, `seed ${seed}: ${result.distanceKm} vs ${truth}`);
      assert.ok(Math.abs(check(nodes, idsOf(nodes, result.order)).km - truth) < 1e-9);
    }
  });

  it('with time windows: the shortest feasible route, and it is feasible', () => {
    for (let seed = 1; seed <= 12; seed++) {
      const nodes = randomNodes(5 + (seed % 4), seed);
      const windows = randomWindows(nodes, seed);
      const result = heldKarpRoute(modelOf(nodes, windows), stopsOf(nodes));
      const truth = bruteForce(nodes, windows);
      assert.equal(result.kind, 'optimal', `seed ${seed}`);
      if (result.kind !== 'optimal') return;
      assert.ok(Math.abs(result.distanceKm - truth.km) < 1e-9, `seed ${seed}: ${result.distanceKm} vs ${truth.km}`);
      assert.equal(check(nodes, idsOf(nodes, result.order), windows).feasible, true);
    }
  });

  it('honours a window on the depot (the return) and max_distance_km as hard constraints', () => {
    const nodes = randomNodes(6, 5);
    const free = bruteForce(nodes).km;
    // a limit just under the shortest tour: no route is feasible
    assert.deepEqual(heldKarpRoute(modelOf(nodes, [{ node: 's0', start: '00:00', end: '23:59' }], free - 0.01), stopsOf(nodes)), { kind: 'infeasible' });
    // the depot closes before any tour can be back
    assert.deepEqual(heldKarpRoute(modelOf(nodes, [{ node: 'depot', start: '00:00', end: '08:10' }]), stopsOf(nodes)), { kind: 'infeasible' });
  });

  it('searches only below an upper bound: none_better at the optimum, the optimum above it', () => {
    const nodes = randomNodes(8, 9);
    const optimum = bruteForce(nodes).km;
    assert.deepEqual(heldKarpRoute(modelOf(nodes), stopsOf(nodes), optimum), { kind: 'none_better' });
    const above = heldKarpRoute(modelOf(nodes), stopsOf(nodes), optimum + 0.5);
    assert.equal(above.kind, 'optimal');
    const windows = randomWindows(nodes, 9);
    const timed = bruteForce(nodes, windows).km;
    assert.deepEqual(heldKarpRoute(modelOf(nodes, windows), stopsOf(nodes), timed), { kind: 'none_better' });
  });

  it(`refuses more than ${HELD_KARP_MAX_STOPS} stops`, () => {
    const nodes = randomNodes(HELD_KARP_MAX_STOPS + 1, 3);
    assert.throws(() => heldKarpRoute(modelOf(nodes), stopsOf(nodes)), RangeError);
  });
});
