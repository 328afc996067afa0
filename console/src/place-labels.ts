/**
 * Where the route map writes each node's name: beside its marker, never over a leg, an
 * arrowhead, another marker or another name where any free place is left. A small greedy
 * search, as map renderers do for point labels: each label tries eight directions around its
 * node at three distances and takes the place that costs least (overlaps cost far more than
 * distance, so a label moves out before it covers anything); labels placed earlier are
 * obstacles for later ones.
 */

export interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}

export interface Segment {
  x1: number;
  y1: number;
  x2: number;
  y2: number;
  /** Half the width that must stay clear: the stroke, or the arrowhead drawn on it. */
  clearance: number;
}

export interface Circle {
  x: number;
  y: number;
  r: number;
}

export interface LabelRequest {
  /** The marker's centre. */
  x: number;
  y: number;
  /** The marker's radius: the label starts outside it. */
  radius: number;
  width: number;
  height: number;
}

/** Right, upper right, up, upper left, left, lower left, down, lower right: the order in which equal places are preferred. */
const DIRECTIONS: readonly (readonly [number, number])[] = [
  [1, 0], [1, -1], [0, -1], [-1, -1], [-1, 0], [-1, 1], [0, 1], [1, 1],
];
const STEPS = [4, 16, 30];
const OVERLAP = 1000;

/** A label's text width in px, estimated for the map's 13 px font (about 0.62 em a character, plus a margin). */
export function labelWidth(text: string, fontPx = 13): number {
  return Math.ceil(text.length * fontPx * 0.62) + 4;
}

function pointToSegment(px: number, py: number, s: Segment): number {
  const dx = s.x2 - s.x1;
  const dy = s.y2 - s.y1;
  const length2 = dx * dx + dy * dy;
  const t = length2 === 0 ? 0 : Math.max(0, Math.min(1, ((px - s.x1) * dx + (py - s.y1) * dy) / length2));
  return Math.hypot(px - (s.x1 + t * dx), py - (s.y1 + t * dy));
}

function pointToBox(px: number, py: number, b: Box): number {
  const dx = Math.max(b.x - px, 0, px - (b.x + b.width));
  const dy = Math.max(b.y - py, 0, py - (b.y + b.height));
  return Math.hypot(dx, dy);
}

/** Whether the segment crosses the box (Liang–Barsky clipping). */
function segmentCrossesBox(s: Segment, b: Box): boolean {
  let t0 = 0;
  let t1 = 1;
  const dx = s.x2 - s.x1;
  const dy = s.y2 - s.y1;
  const edges: [number, number][] = [[-dx, s.x1 - b.x], [dx, b.x + b.width - s.x1], [-dy, s.y1 - b.y], [dy, b.y + b.height - s.y1]];
  for (const [p, q] of edges) {
    if (p === 0) {
      if (q < 0) return false;
      continue;
    }
    const t = q / p;
    if (p < 0) t0 = Math.max(t0, t);
    else t1 = Math.min(t1, t);
    if (t0 > t1) return false;
  }
  return true;
}

/** The distance between a segment and a box (0 when they touch). */
export function segmentToBox(s: Segment, b: Box): number {
  if (segmentCrossesBox(s, b)) return 0;
  const corners: [number, number][] = [[b.x, b.y], [b.x + b.width, b.y], [b.x, b.y + b.height], [b.x + b.width, b.y + b.height]];
  return Math.min(pointToBox(s.x1, s.y1, b), pointToBox(s.x2, s.y2, b), ...corners.map(([x, y]) => pointToSegment(x, y, s)));
}

export function boxesOverlap(a: Box, b: Box, margin = 0): boolean {
  return a.x < b.x + b.width + margin && b.x < a.x + a.width + margin && a.y < b.y + b.height + margin && b.y < a.y + a.height + margin;
}

/** The box of a label `distance` px outside its marker in direction (dx, dy). */
function candidate(label: LabelRequest, [dx, dy]: readonly [number, number], distance: number): Box {
  const d = label.radius + distance;
  const norm = Math.hypot(dx, dy);
  const cx = label.x + (dx / norm) * d;
  const cy = label.y + (dy / norm) * d;
  const x = dx > 0 ? cx : dx < 0 ? cx - label.width : cx - label.width / 2;
  const y = dy > 0 ? cy : dy < 0 ? cy - label.height : cy - label.height / 2;
  return { x, y, width: label.width, height: label.height };
}

/**
 * A box for each label, in order, inside `bounds` where it can be. Each place's cost: OVERLAP
 * for each leg, marker or earlier label it touches (legs keep their clearance), OVERLAP / 2 for
 * leaving the map, then its distance from the marker and its direction's rank.
 */
export function placeLabels(labels: readonly LabelRequest[], obstacles: { segments: readonly Segment[]; circles: readonly Circle[] }, bounds: { width: number; height: number }): Box[] {
  const placed: Box[] = [];
  for (const label of labels) {
    let best: { box: Box; cost: number } | undefined;
    for (const [step, distance] of STEPS.entries()) {
      for (const [rank, direction] of DIRECTIONS.entries()) {
        const box = candidate(label, direction, distance);
        let cost = step * 20 + rank;
        for (const s of obstacles.segments) if (segmentToBox(s, box) < s.clearance) cost += OVERLAP;
        for (const c of obstacles.circles) if (pointToBox(c.x, c.y, box) < c.r + 1) cost += OVERLAP;
        for (const other of placed) if (boxesOverlap(box, other, 2)) cost += OVERLAP;
        if (box.x < 0 || box.y < 0 || box.x + box.width > bounds.width || box.y + box.height > bounds.height) cost += OVERLAP / 2;
        if (best === undefined || cost < best.cost) best = { box, cost };
      }
    }
    placed.push(best!.box);
  }
  return placed;
}
