import { useState } from 'preact/hooks';
import { postJson } from '../api-client.ts';
import { formatValue } from '../format.ts';
import { RouteMap, vehicleColour, type MapNode, type VehicleRoute } from '../route-map.tsx';

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
const EXAMPLES: readonly { name: string; problem: object }[] = [
  {
    name: 'One vehicle, 4 stops (QAOA, 16 qubits)',
    problem: { type: 'route_optimization', nodes: BERLIN.slice(0, 5), constraints: { max_distance_km: 100, vehicle_count: 1 } },
  },
  {
    name: 'Two vehicles, 6 stops, a time window',
    problem: {
      type: 'route_optimization',
      nodes: BERLIN,
      constraints: { max_distance_km: 30, vehicle_count: 2, time_windows: [{ node: 'f', start: '08:00', end: '08:30' }] },
    },
  },
];

interface ScheduleEntry {
  node: string;
  arrival: string;
}

interface RouteSolution {
  method?: string;
  route?: string[];
  routes?: { vehicle: number; stops: string[]; distance_km: number; method?: string; schedule?: ScheduleEntry[] }[];
  schedule?: ScheduleEntry[];
  cost?: number;
  unit?: string;
  feasible?: boolean;
  violations?: unknown;
  infeasible_reason?: string;
  classical_optimum?: number | null;
  optimality_gap?: number;
  classical_optimum_scope?: string;
  quantum?: unknown;
  circuit?: unknown;
}

interface SolveResponse {
  id: string;
  status: string;
  solution: RouteSolution;
  meta: { shots: number; optimal_count: number; energy: number; depth: number; elapsed_ms: number };
}

interface TimeWindow {
  node: string;
  start: string;
  end: string;
}

/** Either answer shape (one vehicle: `route`; several: `routes`) as one list of vehicle routes. */
function vehicleRoutes(solution: RouteSolution): (VehicleRoute & { distance_km?: number; method?: string; schedule?: ScheduleEntry[] })[] {
  if (solution.routes !== undefined) return solution.routes;
  if (solution.route !== undefined) {
    return [{ vehicle: 1, stops: solution.route, ...(solution.cost === undefined ? {} : { distance_km: solution.cost }), ...(solution.schedule === undefined ? {} : { schedule: solution.schedule }) }];
  }
  return [];
}

function Definition(props: { term: string; value: unknown; id?: string }) {
  return (
    <div class="fact">
      <dt>{props.term}</dt>
      <dd id={props.id}>{formatValue(props.value)}</dd>
    </div>
  );
}

export function RouteSolverPage() {
  const [text, setText] = useState(JSON.stringify(EXAMPLES[0]!.problem, null, 2));
  const [shots, setShots] = useState(1024);
  const [seed, setSeed] = useState('7');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | undefined>();
  const [result, setResult] = useState<{ problem: { nodes: MapNode[]; constraints?: { time_windows?: TimeWindow[] } }; response: SolveResponse } | undefined>();

  const solve = async (event: Event) => {
    event.preventDefault();
    let problem: { nodes: MapNode[]; constraints?: { time_windows?: TimeWindow[] } };
    try {
      problem = JSON.parse(text) as typeof problem;
    } catch (e) {
      setError(`The problem is not valid JSON: ${(e as Error).message}`);
      return;
    }
    setBusy(true);
    setError(undefined);
    try {
      const body = { solver: 'qaoa', problem, shots, ...(seed.trim() === '' ? {} : { seed: Number(seed) }) };
      const response = await postJson<SolveResponse>('/api/solve', body);
      setResult({ problem, response });
    } catch (e) {
      setError((e as Error).message);
    } finally {
      setBusy(false);
    }
  };

  const solution = result?.response.solution;
  const routes = solution === undefined ? [] : vehicleRoutes(solution);
  const windows = new Map((result?.problem.constraints?.time_windows ?? []).map((w) => [w.node, w]));
  return (
    <div class="solver">
      <form class="panel" onSubmit={solve}>
        <div class="row">
          <label for="route-example">Example</label>
          <select id="route-example" onChange={(e) => setText(JSON.stringify(EXAMPLES[Number(e.currentTarget.value)]!.problem, null, 2))}>
            {EXAMPLES.map((ex, i) => <option value={i} key={ex.name}>{ex.name}</option>)}
          </select>
        </div>
        <label for="route-problem">Problem (<code>qaoa</code> / <code>route_optimization</code>; the first node is the depot)</label>
        <textarea id="route-problem" rows={12} spellcheck={false} value={text} onInput={(e) => setText(e.currentTarget.value)} />
        <div class="row">
          <label for="route-shots">Shots</label>
          <input id="route-shots" type="number" min={1} max={65536} value={shots} onInput={(e) => setShots(Number(e.currentTarget.value) || 1)} />
          <label for="route-seed">Seed</label>
          <input id="route-seed" class="narrow" type="text" inputMode="numeric" value={seed} onInput={(e) => setSeed(e.currentTarget.value)} />
          <button type="submit" id="route-solve" disabled={busy}>{busy ? 'Solving…' : 'Solve'}</button>
        </div>
      </form>
      {error !== undefined && <p role="alert" class="error" id="route-error">{error}</p>}
      {result !== undefined && solution !== undefined && (
        <section class="panel" aria-labelledby="route-result-title" id="route-result">
          <h2 id="route-result-title">Result <span class="muted">{result.response.id}</span></h2>
          <RouteMap nodes={result.problem.nodes} routes={routes} />
          <ol class="vehicles" id="route-order">
            {routes.map((r, v) => (
              <li key={r.vehicle} data-vehicle={r.vehicle}>
                <span class="swatch" style={{ background: vehicleColour(v) }} aria-hidden="true" />
                <strong>Vehicle {r.vehicle}</strong>
                {r.distance_km !== undefined && ` · ${r.distance_km} km`}
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
          <div class="two-columns">
            <div>
              <h3>Classical certificate</h3>
              <dl class="facts" id="route-certificate">
                <Definition term="Method" value={solution.method} />
                <Definition term="Cost" value={solution.cost === undefined ? undefined : `${solution.cost} ${solution.unit ?? ''}`} id="route-cost" />
                <Definition term="Classical optimum" value={solution.classical_optimum === undefined ? 'not computed (too many stops)' : solution.classical_optimum} id="route-optimum" />
                <Definition term="Optimality gap" value={solution.optimality_gap === undefined ? undefined : `${(solution.optimality_gap * 100).toFixed(1)} %`} id="route-gap" />
                {solution.classical_optimum_scope !== undefined && <Definition term="Scope" value={solution.classical_optimum_scope} />}
                <Definition term="Feasible" value={solution.feasible} />
                {solution.infeasible_reason !== undefined && <Definition term="Why not" value={solution.infeasible_reason} />}
                {solution.violations !== undefined && <Definition term="Violations" value={solution.violations} />}
              </dl>
            </div>
            <div>
              <h3>meta</h3>
              <dl class="facts" id="route-meta">
                {Object.entries(result.response.meta).map(([key, value]) => <Definition term={key} value={value} key={key} />)}
              </dl>
            </div>
          </div>
          <details>
            <summary>Circuit and quantum figures</summary>
            <pre>{JSON.stringify({ quantum: solution.quantum, circuit: solution.circuit }, null, 2)}</pre>
          </details>
        </section>
      )}
    </div>
  );
}
