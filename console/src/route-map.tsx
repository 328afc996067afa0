/**
 * A route drawn on an equirectangular projection of lat/lng, scaled by cos(mean latitude) so a
 * city-sized map keeps its shape. No tiles: the console must work offline, and stops in order
 * with their colours are what the user needs to check the answer.
 */
import { categoryColour } from './palette.ts';

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

export function RouteMap({ nodes, routes }: { nodes: readonly MapNode[]; routes: readonly VehicleRoute[] }) {
  const project = projection(nodes);
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const depot = nodes[0];
  // Each stop's position in its vehicle's route (1-based), for the label.
  const order = new Map<string, { vehicle: number; position: number }>();
  routes.forEach((r, v) => r.stops.slice(1, -1).forEach((id, i) => order.set(id, { vehicle: v, position: i + 1 })));
  return (
    <svg id="route-map" class="route-map" viewBox={`0 0 ${WIDTH} ${HEIGHT}`} role="img" aria-label={`Map of ${routes.length} route(s) over ${nodes.length} nodes`}>
      <defs>
        {routes.map((_, v) => (
          <marker id={`arrow-${v}`} viewBox="0 0 10 10" refX="16" refY="5" markerWidth="6" markerHeight="6" orient="auto-start-reverse">
            <path d="M 0 0 L 10 5 L 0 10 z" fill={vehicleColour(v)} />
          </marker>
        ))}
      </defs>
      {routes.map((r, v) =>
        r.stops.slice(1).map((id, i) => {
          const from = byId.get(r.stops[i]!);
          const to = byId.get(id);
          if (from === undefined || to === undefined) return null;
          const a = project(from);
          const b = project(to);
          return <line class="leg" data-vehicle={r.vehicle} x1={a.x} y1={a.y} x2={b.x} y2={b.y} stroke={vehicleColour(v)} stroke-width="3" marker-end={`url(#arrow-${v})`} />;
        }),
      )}
      {nodes.map((n) => {
        const p = project(n);
        const at = order.get(n.id);
        if (n === depot) {
          return (
            <g class="depot">
              <rect x={p.x - 8} y={p.y - 8} width="16" height="16" fill="#111" />
              <text x={p.x + 12} y={p.y - 10} class="map-label">{n.id === 'depot' ? n.id : `${n.id} (depot)`}</text>
            </g>
          );
        }
        return (
          <g class="stop" data-stop={n.id} data-order={at?.position ?? ''}>
            <circle cx={p.x} cy={p.y} r="11" fill={at === undefined ? '#888' : vehicleColour(at.vehicle)} />
            <text x={p.x} y={p.y + 4} text-anchor="middle" class="map-order">{at?.position ?? '–'}</text>
            <text x={p.x + 14} y={p.y - 10} class="map-label">{n.id}</text>
          </g>
        );
      })}
    </svg>
  );
}
