import { useState } from 'preact/hooks';
import { CountsHistogram, OutcomeTable, type MeasurementCounts } from '../counts-histogram.tsx';
import { RouteMap, vehicleColour, type MapNode, type VehicleRoute } from '../route-map.tsx';
import { SolveFacts, type Certificate } from '../solve-facts.tsx';
import { SolveForm, type SolveExample, type SolveResponse } from '../solve-form.tsx';
import { CountsOptions, field, listOf, NumberField, numberOr, TextField } from '../solve-fields.tsx';
import { formatFigure } from '../format.ts';

const BERLIN: MapNode[] = [
  { id: 'depot', lat: 52.52, lng: 13.405 },
  { id: 'a', lat: 52.53, lng: 13.42 },
  { id: 'b', lat: 52.5, lng: 13.45 },
  { id: 'c', lat: 52.48, lng: 13.39 },
  { id: 'd', lat: 52.51, lng: 13.36 },
  { id: 'e', lat: 52.55, lng: 13.3 },
  { id: 'f', lat: 52.45, lng: 13.5 },
];

/** Worked examples: the first runs one QAOA circuit (4 stops, 16 qubits); the second splits stops between vehicles. */
const EXAMPLES: readonly SolveExample[] = [
  {
    name: 'One vehicle, 4 stops (QAOA, 16 qubits)',
    problem: { type: 'route_optimization', nodes: BERLIN.slice(0, 5), constraints: { max_distance_km: 100, vehicle_count: 1 }, options: { include_counts: true } },
  },
  {
    name: 'Two vehicles, 6 stops, a time window',
    problem: {
      type: 'route_optimization',
      nodes: BERLIN,
      constraints: { max_distance_km: 30, vehicle_count: 2, time_windows: [{ node: 'f', start: '08:00', end: '08:30' }] },
      options: { include_counts: true, counts_top_k: 16 },
    },
  },
];

interface ScheduleEntry {
  node: string;
  arrival: string;
}

/**
 * Counts asked for (`options.include_counts`): the histogram, or null and why there is none.
 * On a route's `quantum_result`, or on the route itself when no circuit ran for it.
 */
interface CountsAnswer {
  measurement_counts?: MeasurementCounts | null;
  measurement_counts_unavailable?: string;
}

interface RouteSolution extends Certificate, CountsAnswer {
  route?: string[];
  routes?: ({ vehicle: number; stops: string[]; distance_km: number; method?: string; schedule?: ScheduleEntry[]; quantum_result?: CountsAnswer } & CountsAnswer)[];
  quantum_result?: CountsAnswer;
  schedule?: ScheduleEntry[];
  cost?: number;
  unit?: string;
}

interface RouteProblem {
  nodes: MapNode[];
  constraints?: { time_windows?: { node: string; start: string; end: string }[] };
}

/** Either answer shape (one vehicle: `route`; several: `routes`) as one list of vehicle routes. */
function vehicleRoutes(solution: RouteSolution): (VehicleRoute & { distance_km?: number; method?: string; schedule?: ScheduleEntry[] })[] {
  if (solution.routes !== undefined) return solution.routes;
  if (solution.route !== undefined) {
    return [{ vehicle: 1, stops: solution.route, ...(solution.cost === undefined ? {} : { distance_km: solution.cost }), ...(solution.schedule === undefined ? {} : { schedule: solution.schedule }) }];
  }
  return [];
}

export function RouteSolverPage() {
  const [result, setResult] = useState<{ problem: RouteProblem; response: SolveResponse<RouteSolution> } | undefined>();
  const solution = result?.response.solution;
  const routes = solution === undefined ? [] : vehicleRoutes(solution);
  const windows = new Map((result?.problem.constraints?.time_windows ?? []).map((w) => [w.node, w]));
  return (
    <div class="solver">
      <SolveForm<RouteProblem, RouteSolution>
        prefix="route"
        solver="qaoa"
        description={<>Problem (<code>qaoa</code> / <code>route_optimization</code>; the first node is the depot)</>}
        examples={EXAMPLES}
        fields={(problem, update) => <RouteFields problem={problem} update={update} />}
        onSolved={(problem, response) => setResult({ problem, response })}
      />
      {result !== undefined && solution !== undefined && (
        <section class="panel" aria-labelledby="route-result-title" id="route-result">
          <h2 id="route-result-title">Result <span class="muted">{result.response.id}</span></h2>
          <RouteMap nodes={result.problem.nodes} routes={routes} />
          <ol class="vehicles" id="route-order">
            {routes.map((r, v) => (
              <li key={r.vehicle} data-vehicle={r.vehicle}>
                <span class="swatch" style={{ background: vehicleColour(v) }} aria-hidden="true" />
                <strong>Vehicle {r.vehicle}</strong>
                {r.distance_km !== undefined && ` · ${formatFigure(r.distance_km)} km`}
                {r.method !== undefined && ` · ${r.method}`}
                <ol class="stops">
                  {r.stops.slice(1, -1).map((id) => {
                    const arrival = r.schedule?.find((s) => s.node === id)?.arrival;
                    const w = windows.get(id);
                    return <li key={id}>{id}{arrival !== undefined && ` at ${arrival}`}{w !== undefined && ` (window ${w.start}–${w.end})`}</li>;
                  })}
                </ol>
                {r.stops.length <= 2 && <span class="muted">no stops</span>}
              </li>
            ))}
          </ol>
          <RouteHistograms solution={solution} answerShots={result.response.meta.optimal_count} />
          <SolveFacts
            prefix="route"
            response={result.response}
            extra={[{ term: 'Cost', value: solution.cost === undefined ? undefined : `${formatFigure(solution.cost)} ${solution.unit ?? ''}`, id: 'route-cost' }]}
            optimum={{ term: 'Classical optimum', value: typeof solution.classical_optimum === 'number' ? `${formatFigure(solution.classical_optimum)} km` : solution.classical_optimum === null ? 'no feasible route' : 'not computed (too large to enumerate)' }}
          />
        </section>
      )}
    </div>
  );
}

/** The counts of one route: its QAOA run's, or, where no circuit ran, the route's own null and reason. */
function countsOf(route: CountsAnswer & { quantum_result?: CountsAnswer }): CountsAnswer {
  return route.quantum_result ?? route;
}

/** One measurement histogram per route whose order came from one QAOA circuit; where there is none, the API's reason. */
function RouteHistograms({ solution, answerShots }: { solution: RouteSolution; answerShots: number }) {
  const runs = (solution.routes ?? [{ vehicle: 1, ...solution }]).map((r) => ({ vehicle: r.vehicle, ...countsOf(r) }));
  if (runs.every((r) => r.measurement_counts === undefined)) return null;
  return (
    <>
      <h3>QAOA measurements</h3>
      {runs.map((r) => (
        <div key={r.vehicle}>
          {runs.length > 1 && <p>Vehicle {r.vehicle}</p>}
          {r.measurement_counts != null
            ? (
                <>
                  <CountsHistogram
                    id={`route-histogram-${r.vehicle}`}
                    counts={r.measurement_counts}
                    title={`QAOA measurement histogram of vehicle ${r.vehicle}'s route`}
                    meaning={{ outcome: `an ordering of ${runs.length > 1 ? 'this vehicle\'s' : 'the'} stops as short as the enumerated optimum (a route and its reverse are two bitstrings, both counted when both are optimal)`, answerShots, answerShotsNote: `${runs.length > 1 ? 'with several vehicles, the largest over their circuits; ' : ''}0 for a route a classical method found` }}
                  />
                  <OutcomeTable
                    id={`route-outcomes-${r.vehicle}`}
                    counts={r.measurement_counts}
                    label={`Measured outcomes of vehicle ${r.vehicle}`}
                    meaning={{ heading: 'Route (one stop per position)', of: (o) => (Array.isArray(o['route']) ? (o['route'] as string[]).join(' → ') : 'not a valid ordering') }}
                  />
                </>
              )
            : <p class="muted" id={`route-counts-unavailable-${r.vehicle}`}>No histogram: {r.measurement_counts_unavailable ?? 'the answer gave no reason'}.</p>}
        </div>
      ))}
    </>
  );
}

interface Stop {
  id: string;
  lat: number;
  lng: number;
}

interface TimeWindow {
  node: string;
  start: string;
  end: string;
}

/** The route problem's fields: the depot and stops with their coordinates and time windows, the vehicles and their distance limit. */
function RouteFields({ problem, update }: { problem: Record<string, unknown>; update: (p: Record<string, unknown>) => void }) {
  const nodes = listOf(field(problem, 'nodes')) as unknown as Stop[];
  const constraints = (field(problem, 'constraints') ?? {}) as Record<string, unknown>;
  const windows = listOf(constraints['time_windows']) as unknown as TimeWindow[];
  const setNodes = (next: Stop[]) => update({ ...problem, nodes: next });
  const setConstraints = (next: Record<string, unknown>) => update({ ...problem, constraints: { ...constraints, ...next } });
  const setNode = (i: number, change: Partial<Stop>) => {
    const before = nodes[i]!.id;
    const next = nodes.map((n, j) => (j === i ? { ...n, ...change } : n));
    // A renamed stop keeps its time window.
    const renamed = change.id !== undefined ? windows.map((w) => (w.node === before ? { ...w, node: change.id! } : w)) : windows;
    update({ ...problem, nodes: next, constraints: { ...constraints, ...(windows.length > 0 ? { time_windows: renamed } : {}) } });
  };
  const setWindow = (id: string, change: Partial<TimeWindow>) => {
    const old = windows.find((w) => w.node === id) ?? { node: id, start: '', end: '' };
    const merged = { ...old, ...change };
    const rest = windows.filter((w) => w.node !== id);
    const next = merged.start === '' && merged.end === '' ? rest : [...rest, merged];
    const others = { ...constraints };
    delete others['time_windows'];
    update({ ...problem, constraints: next.length === 0 ? others : { ...others, time_windows: next } });
  };
  const addStop = () => {
    const last = nodes[nodes.length - 1] ?? { lat: 52.52, lng: 13.405 };
    let n = nodes.length;
    while (nodes.some((s) => s.id === `s${n}`)) n++;
    setNodes([...nodes, { id: `s${n}`, lat: Math.round((last.lat + 0.01) * 1e4) / 1e4, lng: Math.round((last.lng + 0.01) * 1e4) / 1e4 }]);
  };
  return (
    <>
      <div class="table-scroll" tabIndex={0} role="region" aria-label="Stops">
        <table id="route-stops" class="form-table">
          <caption>Stops (the first is the depot every vehicle leaves from and returns to)</caption>
          <thead><tr><th scope="col">Name</th><th scope="col">Latitude</th><th scope="col">Longitude</th><th scope="col">Time window (HH:MM)</th><th scope="col"><span class="visually-hidden">Remove</span></th></tr></thead>
          <tbody>
            {nodes.map((n, i) => {
              const w = windows.find((x) => x.node === n.id);
              return (
                <tr key={i}>
                  <td><TextField id={`route-stop-${i}-id`} hideLabel label={`Name of stop ${i + 1}`} value={String(n.id ?? '')} onValue={(v) => setNode(i, { id: v })} /></td>
                  <td><NumberField id={`route-stop-${i}-lat`} hideLabel label={`Latitude of ${n.id}`} min={-90} max={90} value={numberOr(n.lat, Number.NaN)} onValue={(v) => setNode(i, { lat: v })} /></td>
                  <td><NumberField id={`route-stop-${i}-lng`} hideLabel label={`Longitude of ${n.id}`} min={-180} max={180} value={numberOr(n.lng, Number.NaN)} onValue={(v) => setNode(i, { lng: v })} /></td>
                  <td class="window">
                    <TextField id={`route-stop-${i}-from`} hideLabel label={`Earliest arrival at ${n.id}`} placeholder="from" class="time" value={w?.start ?? ''} onValue={(v) => setWindow(n.id, { start: v })} />
                    <TextField id={`route-stop-${i}-to`} hideLabel label={`Latest arrival at ${n.id}`} placeholder="to" class="time" value={w?.end ?? ''} onValue={(v) => setWindow(n.id, { end: v })} />
                  </td>
                  <td>{i > 0 && <button type="button" class="small" aria-label={`Remove ${n.id}`} onClick={() => setNodes(nodes.filter((_, j) => j !== i))}>Remove</button>}</td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
      <div class="row">
        <button type="button" id="route-add-stop" onClick={addStop}>Add stop</button>
      </div>
      <div class="row">
        <NumberField id="route-vehicles" class="inline" label="Vehicles" integer min={1} max={50} value={numberOr(constraints['vehicle_count'], Number.NaN)} onValue={(v) => setConstraints({ vehicle_count: v })} />
        <NumberField id="route-max-distance" class="inline" label="Longest route (km)" min={0} value={numberOr(constraints['max_distance_km'], Number.NaN)} onValue={(v) => setConstraints({ max_distance_km: v })} />
      </div>
      <CountsOptions prefix="route" problem={problem} update={update} />
    </>
  );
}
