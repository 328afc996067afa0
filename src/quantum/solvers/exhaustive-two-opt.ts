import { nearestNeighbourOrder } from './route-local-search.ts';
import { evaluateRoute, penalisedCost, type RouteModel } from './route-model.ts';

/*
 * Two 2-opts live in the route solver, on purpose. routeLocalSearch (route-local-search.ts) is a
 * whole search: its own starts (nearest neighbour, savings, window-end order), 2-opt and Or-opt
 * tried only against each stop's nearest neighbours, then double-bridge kicks; it never starts
 * from an order it is given. exhaustiveTwoOpt takes an order and tries every segment reversal
 * until none helps. The windowed QAOA pass needs exactly that (its route is QAOA's windows, then
 * 2-opt: what `qaoa_windows_2opt` names), and the sweep scores many candidate arcs with it, where
 * the local search would spend several starts and, past 7 stops, 50 + 4m kicks on each. Using
 * one for the other would change the routes and splits answered.
 */

/**
 * 2-opt: reverses segments while that lowers the cost, to a local optimum. Without time windows
 * the cost is the length (plus a penalty that only grows with it), so each move is scored in O(1)
 * from the four edges it changes; with time windows every candidate route is re-timed, within
 * a budget of TWO_OPT_BUDGET node visits.
 */
const TWO_OPT_BUDGET = 5e7;

export function exhaustiveTwoOpt(model: RouteModel, order: number[], scale: number): number[] {
  if (model.windows.every((w) => w === undefined)) {
    const tour = [0, ...order, 0];
    const d = model.dist;
    let improved = true;
    while (improved) {
      improved = false;
      for (let i = 1; i < tour.length - 2; i++) {
        for (let j = i + 1; j < tour.length - 1; j++) {
          const a = tour[i - 1]!;
          const b = tour[i]!;
          const c = tour[j]!;
          const e = tour[j + 1]!;
          if (d[a]![c]! + d[b]![e]! < d[a]![b]! + d[c]![e]! - 1e-9) {
            for (let x = i, y = j; x < y; x++, y--) [tour[x], tour[y]] = [tour[y]!, tour[x]!];
            improved = true;
          }
        }
      }
    }
    return tour.slice(1, -1);
  }
  let best = [...order];
  let bestCost = penalisedCost(model, evaluateRoute(model, best), scale);
  let budget = TWO_OPT_BUDGET;
  let improved = true;
  while (improved && budget > 0) {
    improved = false;
    for (let i = 0; i < best.length - 1 && budget > 0; i++) {
      for (let j = i + 1; j < best.length && budget > 0; j++) {
        const candidate = [...best.slice(0, i), ...best.slice(i, j + 1).reverse(), ...best.slice(j + 1)];
        budget -= candidate.length + 1;
        const cost = penalisedCost(model, evaluateRoute(model, candidate), scale);
        if (cost < bestCost - 1e-9) {
          best = candidate;
          bestCost = cost;
          improved = true;
        }
      }
    }
  }
  return best;
}

/** Nearest neighbour from the depot, then exhaustiveTwoOpt. */
export function nearestNeighbourTwoOpt(model: RouteModel, stops: number[], scale: number): number[] {
  return exhaustiveTwoOpt(model, nearestNeighbourOrder(model, stops), scale);
}
