/**
 * A route drawn on an equirectangular projection of lat/lng, scaled by cos(mean latitude) so a
 * city-sized map keeps its shape. No tiles: the console must work offline, and stops in order
 * with their colours are what the user needs to check the answer.
 */
import { categoryColour } from './palette.ts';
import { labelWidth, placeLabels, type Segment } from './place-labels.ts';

export interface MapNode {
  id: string;
  lat: number;
  lng: number;
}

export interface VehicleRoute {
  vehicle: number;
  /** Node ids, depot first and last (as the solver answers). */
  stops: string[];
}


const WIDTH = 600;
const HEIGHT = 400;
const PAD = 36;

/** Each vehicle's colour (Okabe–Ito, see palette.ts). */
export const vehicleColour = categoryColour;

/** Maps lat/lng into the SVG box, keeping the aspect ratio of the projected area. */
export function projection(nodes: readonly MapNode[]): (node: MapNode) => { x: number; y: number } {
  const meanLat = nodes.reduce((s, n) => s + n.lat, 0) / Math.max(1, nodes.length);
  const k = Math.cos((meanLat * Math.PI) / 180);
  const xs = nodes.map((n) => n.lng * k);
  const ys = nodes.map((n) => n.lat);
  const minX = Math.min(...xs);
  const maxX = Math.max(...xs);
  const minY = Math.min(...ys);
  const maxY = Math.max(...ys);
  const span = Math.max(maxX - minX, maxY - minY, 1e-9);
  const scale = Math.min((WIDTH - 2 * PAD) / Math.max(maxX - minX, span * 1e-3), (HEIGHT - 2 * PAD) / Math.max(maxY - minY, span * 1e-3));
  const offsetX = (WIDTH - (maxX - minX) * scale) / 2;
  const offsetY = (HEIGHT - (maxY - minY) * scale) / 2;
  return (n) => ({ x: offsetX + (n.lng * k - minX) * scale, y: HEIGHT - (offsetY + (n.lat - minY) * scale) });
}

/** Arrowhead geometry of a leg (its marker below, drawn in stroke widths of 3 px): from 29 px to 11 px before the node's centre, 9 px each side. */
const ARROW_BACK = 29;
const ARROW_TIP = 11;
const ARROW_HALF = 9;
const STOP_RADIUS = 11;
const LABEL_FONT = 13;

/** The legs and arrowheads as obstacles for the labels (place-labels.ts). */
function legObstacles(legs: readonly { a: { x: number; y: number }; b: { x: number; y: number } }[]): Segment[] {
  return legs.flatMap(({ a, b }) => {
    const length = Math.hypot(b.x - a.x, b.y - a.y);
    const leg: Segment = { x1: a.x, y1: a.y, x2: b.x, y2: b.y, clearance: 3 };
    if (length <= ARROW_TIP) return [leg];
    const along = (d: number) => ({ x: b.x - ((b.x - a.x) * d) / length, y: b.y - ((b.y - a.y) * d) / length });
    const back = along(Math.min(length, ARROW_BACK));
    const tip = along(ARROW_TIP);
    return [leg, { x1: back.x, y1: back.y, x2: tip.x, y2: tip.y, clearance: ARROW_HALF + 1 }];
  });
}

export function RouteMap({ nodes, routes }: { nodes: readonly MapNode[]; routes: readonly VehicleRoute[] }) {
  const project = projection(nodes);
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const depot = nodes[0];
  // Each stop's position in its vehicle's route (1-based), for the label.
  const order = new Map<string, { vehicle: number; position: number }>();
  routes.forEach((r, v) => r.stops.slice(1, -1).forEach((id, i) => order.set(id, { vehicle: v, position: i + 1 })));
  const legs = routes.flatMap((r, v) =>
    r.stops.slice(1).flatMap((id, i) => {
      const from = byId.get(r.stops[i]!);
      const to = byId.get(id);
      return from === undefined || to === undefined ? [] : [{ vehicle: r.vehicle, colour: v, a: project(from), b: project(to) }];
    }),
  );
  const points = nodes.map((n) => ({ node: n, at: project(n), text: n === depot && n.id !== 'depot' ? `${n.id} (depot)` : n.id }));
  const boxes = placeLabels(
    points.map((p) => ({ x: p.at.x, y: p.at.y, radius: STOP_RADIUS + 1, width: labelWidth(p.text, LABEL_FONT), height: LABEL_FONT + 3 })),
    { segments: legObstacles(legs), circles: points.map((p) => ({ x: p.at.x, y: p.at.y, r: STOP_RADIUS + 1 })) },
    { width: WIDTH, height: HEIGHT },
  );
  return (
    <svg id="route-map" class="route-map" viewBox={`0 0 ${WIDTH} ${HEIGHT}`} role="img" aria-label={`Map of ${routes.length} route(s) over ${nodes.length} nodes`}>
      <defs>
        {routes.map((_, v) => (
          <marker id={`arrow-${v}`} viewBox="0 0 10 10" refX="16" refY="5" markerWidth="6" markerHeight="6" orient="auto-start-reverse">
            <path d="M 0 0 L 10 5 L 0 10 z" fill={vehicleColour(v)} />
          </marker>
        ))}
      </defs>
      {legs.map((l) => <line class="leg" data-vehicle={l.vehicle} x1={l.a.x} y1={l.a.y} x2={l.b.x} y2={l.b.y} stroke={vehicleColour(l.colour)} stroke-width="3" marker-end={`url(#arrow-${l.colour})`} />)}
      {points.map(({ node: n, at: p }) => {
        const at = order.get(n.id);
        if (n === depot) return <rect class="depot" x={p.x - 8} y={p.y - 8} width="16" height="16" fill="#111" />;
        return (
          <g class="stop" data-stop={n.id} data-order={at?.position ?? ''}>
            <circle cx={p.x} cy={p.y} r={STOP_RADIUS} fill={at === undefined ? '#888' : vehicleColour(at.vehicle)} />
            <text x={p.x} y={p.y + 4} text-anchor="middle" class="map-order">{at?.position ?? '–'}</text>
          </g>
        );
      })}
      {/* Names last, so no marker is drawn over one; each where place-labels found room. */}
      {points.map(({ node: n, text }, i) => (
        <text x={boxes[i]!.x + 2} y={boxes[i]!.y + LABEL_FONT} class="map-label" data-label-for={n.id}>{text}</text>
      ))}
    </svg>
  );
}
