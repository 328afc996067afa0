import { MAX_MAGNITUDE, PREDICT_MAX } from './solve-limits.ts';

/** Grid points per side added to `predict` to draw the decision regions (GRID² predictions), fewer when `predict` would pass its limit. */
export const GRID = 24;
/** Below this many points per side the regions would be too coarse to be worth the circuits: no grid. */
export const GRID_MIN = 8;

/** The grid the page added: which predictions are the user's (the first `own`) and which the grid's. */
export type GridPlan =
  | { own: number; points: number; side: number }
  /** No grid, and why (shown instead of the regions). */
  | { skipped: string };

/** A grid of side × side points over the training data's bounding box and the user's points, 8% margin, inside the API's feature bounds. */
export function gridOver(points: readonly (readonly number[])[], side: number): number[][] {
  const clamp = (v: number): number => Math.min(MAX_MAGNITUDE, Math.max(-MAX_MAGNITUDE, v));
  const span = (axis: number): [number, number] => {
    const values = points.map((p) => p[axis]!);
    const lo = Math.min(...values);
    const hi = Math.max(...values);
    const margin = (hi - lo) * 0.08 || 1;
    return [clamp(lo - margin), clamp(hi + margin)];
  };
  const [x0, x1] = span(0);
  const [y0, y1] = span(1);
  // toPrecision may round a clamped end past the bound: clamp again after rounding.
  const round = (v: number): number => clamp(Number(v.toPrecision(6)));
  const grid: number[][] = [];
  for (let i = 0; i < side; i++) for (let j = 0; j < side; j++) grid.push([round(x0 + ((x1 - x0) * i) / (side - 1)), round(y0 + ((y1 - y0) * j) / (side - 1))]);
  return grid;
}

/** A row the API would read as a 2-D point: an object whose `features` are two finite numbers. */
function isPlanePoint(row: unknown): row is { features: [number, number] } {
  if (typeof row !== 'object' || row === null) return false;
  const features = (row as { features?: unknown }).features;
  return Array.isArray(features) && features.length === 2 && features.every((v) => typeof v === 'number' && Number.isFinite(v));
}

/**
 * The problem to send, with the grid added to `predict` when the regions can be drawn; any
 * problem the page cannot read as 2-D points goes as typed, for the API to answer (a 422
 * naming the field rather than an error of the page's own).
 */
export function withGrid(problem: unknown): { problem: unknown; plan: GridPlan | null } {
  if (typeof problem !== 'object' || problem === null) return { problem, plan: null };
  const { training_data: training, predict } = problem as { training_data?: unknown; predict?: unknown };
  if (!Array.isArray(training) || !Array.isArray(predict)) return { problem, plan: null };
  const rows: unknown[] = [...training, ...predict];
  // Regions only for 2-D features: a grid over more dimensions could not be drawn honestly on a plane.
  if (rows.length === 0 || !rows.every(isPlanePoint)) return { problem, plan: null };
  const side = Math.min(GRID, Math.floor(Math.sqrt(Math.max(0, PREDICT_MAX - predict.length))));
  if (side < GRID_MIN) {
    return { problem, plan: { skipped: `your ${predict.length} points leave room in predict (at most ${PREDICT_MAX}) for fewer than ${GRID_MIN} × ${GRID_MIN} grid points, so no regions are drawn` } };
  }
  const grid = gridOver((rows as { features: [number, number] }[]).map((r) => r.features), side);
  return { problem: { ...problem, predict: [...predict, ...grid.map((features) => ({ features }))] }, plan: { own: predict.length, points: grid.length, side } };
}
