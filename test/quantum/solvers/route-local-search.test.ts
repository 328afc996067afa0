import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { nearestNeighbourOrder, routeLocalSearch, savingsOrder } from '../../../src/quantum/solvers/route-local-search.ts';
import { evaluateRoute } from '../../../src/quantum/solvers/route-model.ts';
import { bruteForce, check, randomNodes, randomWindows, shortestTourKm } from './route-ground-truth.ts';
import { idsOf, modelOf, stopsOf } from './route-test-model.ts';

const SCALE = 1e6;

describe('routeLocalSearch', () => {
  it('starts are permutations of the stops', () => {
    const nodes = randomNodes(12, 4);
    const model = modelOf(nodes);
    for (const order of [nearestNeighbourOrder(model, stopsOf(nodes)), savingsOrder(model, stopsOf(nodes))]) {
      assert.deepEqual([...order].sort((a, b) => a - b), stopsOf(nodes));
    }
  });

  it('ends at a route no 2-opt, relocate or Or-opt move improves, never below the optimum', () => {
    for (let seed = 1; seed <= 6; seed++) {
      const nodes = randomNodes(10 + seed, seed);
      const model = modelOf(nodes);
      const order = routeLocalSearch(model, stopsOf(nodes), SCALE);
      assert.deepEqual([...order].sort((a, b) => a - b), stopsOf(nodes));
      const km = evaluateRoute(model, order).distanceKm;
      assert.ok(km >= shortestTourKm(nodes) - 1e-9);
      // exhaustive check of the neighbourhoods, independent of the neighbour lists
      const tour = [0, ...order, 0];
      const d = model.dist;
      for (let i = 0; i < tour.length - 2; i++) {
        for (let j = i + 2; j < tour.length - 1; j++) {
          const delta = d[tour[i]!]![tour[j]!]! + d[tour[i + 1]!]![tour[j + 1]!]! - d[tour[i]!]![tour[i + 1]!]! - d[tour[j]!]![tour[j + 1]!]!;
          assert.ok(delta > -1e-6, `seed ${seed}: 2-opt (${i}, ${j}) saves ${-delta} km`);
        }
      }
      for (let len = 1; len <= 3; len++) {
        for (let s = 0; s + len <= order.length; s++) {
          const moved = order.slice(s, s + len);
          const rest = [...order.slice(0, s), ...order.slice(s + len)];
          for (let at = 0; at <= rest.length; at++) {
            for (const seg of [moved, [...moved].reverse()]) {
              const candidate = [...rest.slice(0, at), ...seg, ...rest.slice(at)];
              assert.ok(evaluateRoute(model, candidate).distanceKm > km - 1e-6, `seed ${seed}: moving ${len} stops from ${s} to ${at} is shorter`);
            }
          }
        }
      }
    }
  });

  it('reaches the optimum on small instances (seeded, 8 stops)', () => {
    let optimal = 0;
    for (let seed = 1; seed <= 6; seed++) {
      const nodes = randomNodes(8, seed + 100);
      const km = evaluateRoute(modelOf(nodes), routeLocalSearch(modelOf(nodes), stopsOf(nodes), SCALE)).distanceKm;
      if (Math.abs(km - bruteForce(nodes).km) < 1e-9) optimal++;
    }
    assert.ok(optimal >= 5, `optimal on ${optimal} of 6`);
  });

  it('with time windows: finds a feasible route when one exists (seeded, 8 stops)', () => {
    for (let seed = 1; seed <= 6; seed++) {
      const nodes = randomNodes(8, seed + 200);
      const windows = randomWindows(nodes, seed + 200);
      const order = routeLocalSearch(modelOf(nodes, windows), stopsOf(nodes), SCALE);
      const own = check(nodes, idsOf(nodes, order), windows);
      assert.equal(own.feasible, true, `seed ${seed}`);
      assert.ok(own.km >= bruteForce(nodes, windows).km - 1e-9);
    }
  });
});
