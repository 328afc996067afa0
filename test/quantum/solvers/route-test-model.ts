import { haversineKm } from '../../../src/quantum/solvers/qaoa-route.ts';
import type { RouteModel } from '../../../src/quantum/solvers/route-model.ts';
import type { Node, Window } from './route-ground-truth.ts';

const minutes = (text: string): number => Number(text.slice(0, 2)) * 60 + Number(text.slice(3, 5));

/** The solver's model for `nodes` (40 km/h, 5 min per stop, leaving 08:00), built the way the tests' ground truth reads it. */
export function modelOf(nodes: Node[], windows: readonly Window[] = [], maxDistanceKm = 1000): RouteModel {
  const byId = new Map(windows.map((w) => [w.node, { start: minutes(w.start), end: minutes(w.end) }]));
  return {
    dist: nodes.map((a) => nodes.map((b) => haversineKm(a, b))),
    windows: nodes.map((n) => byId.get(n.id)),
    speedKmh: 40,
    serviceMinutes: 5,
    departure: 8 * 60,
    maxDistanceKm,
  };
}

export const idsOf = (nodes: Node[], order: readonly number[]): string[] => order.map((i) => nodes[i]!.id);
export const stopsOf = (nodes: Node[]): number[] => nodes.slice(1).map((_, i) => i + 1);
