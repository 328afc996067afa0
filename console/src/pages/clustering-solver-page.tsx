import { useMemo, useState } from 'preact/hooks';
import { categoryColour } from '../palette.ts';
import { ScatterChart, type ScatterGroup } from '../scatter-chart.tsx';
import { SolveFacts, type Certificate } from '../solve-facts.tsx';
import { SolveForm, type SolveExample, type SolveResponse } from '../solve-form.tsx';
import { blobs } from '../sample-data.ts';
import { field, LinesField, listOf, NumberField, numberOr, readNumbers, type LineError } from '../solve-fields.tsx';
import { formatFigure, formatPercent, formatCount } from '../format.ts';

const THREE = blobs([[1, 1], [5, 1.5], [3, 4.5]], 10, 0.6, 11).map((features, i) => ({ id: `p${i}`, features }));
const FOUR = blobs([[0, 0], [0, 6], [6, 0], [6, 6]], 8, 1.1, 5).map((features, i) => ({ id: `p${i}`, features }));

const EXAMPLES: readonly SolveExample[] = [
  { name: '30 points in 3 groups, k = 3', problem: { type: 'clustering', data: THREE, k: 3, max_iterations: 20 } },
  { name: '32 points in 4 looser groups, k = 4', problem: { type: 'clustering', data: FOUR, k: 4, max_iterations: 20 } },
];

interface ClusteringProblem {
  data: { id: string; features: number[] }[];
}

interface ClusteringSolution extends Certificate {
  clusters?: { id: number | string; members: string[]; centroid?: number[] }[];
  inertia?: number;
  classical_inertia?: number;
  classical_scope?: string;
  assignment_agreement?: number;
  iterations?: number;
}

/** Each cluster's members at their first two features, and the centroids the solver returned. */
function clusterGroups(problem: ClusteringProblem, solution: ClusteringSolution): ScatterGroup[] {
  const byId = new Map(problem.data.map((d) => [d.id, d.features]));
  const at = (features: readonly number[] | undefined) => ({ x: features?.[0] ?? 0, y: features?.[1] ?? 0 });
  const clusters = solution.clusters ?? [];
  return [
    ...clusters.map((c, i) => ({
      label: `cluster ${c.id} (${c.members.length})`,
      colour: categoryColour(i),
      size: 9,
      points: c.members.flatMap((m) => (byId.has(m) ? [{ ...at(byId.get(m)), name: m }] : [])),
    })),
    {
      label: 'centroids',
      colour: '#111111',
      size: 15,
      fill: 'rgba(255,255,255,0.85)',
      named: true,
      points: clusters.flatMap((c) => (c.centroid === undefined ? [] : [{ ...at(c.centroid), name: `centroid ${c.id}` }])),
    },
  ];
}

export function ClusteringSolverPage() {
  const [result, setResult] = useState<{ problem: ClusteringProblem; response: SolveResponse<ClusteringSolution> } | undefined>();
  const solution = result?.response.solution;
  const groups = useMemo(() => (result === undefined ? [] : clusterGroups(result.problem, result.response.solution)), [result]);
  const dimensions = result?.problem.data[0]?.features.length ?? 0;
  return (
    <div class="solver">
      <SolveForm<ClusteringProblem, ClusteringSolution>
        prefix="clustering"
        solver="qkmeans"
        description={<>Problem (<code>qkmeans</code> / <code>clustering</code>; distances estimated by swap tests)</>}
        examples={EXAMPLES}
        fields={(problem, update) => <ClusteringFields problem={problem} update={update} />}
        onSolved={(problem, response) => setResult({ problem, response })}
      />
      {result !== undefined && solution !== undefined && (
        <section class="panel" aria-labelledby="clustering-result-title" id="clustering-result">
          <h2 id="clustering-result-title">Result <span class="muted">{result.response.id}</span></h2>
          <ScatterChart
            id="clustering-chart"
            groups={groups}
            xLabel="feature 0"
            yLabel="feature 1"
            description={`${result.problem.data.length} points in ${solution.clusters?.length ?? 0} clusters, coloured by the cluster the solver returned, and the centroids`}
          />
          {dimensions > 2 && <p class="muted">The points have {dimensions} features; the chart shows the first two.</p>}
          {dimensions === 1 && <p class="muted">The points have one feature; it is drawn on both axes.</p>}
          <ol class="vehicles" id="clustering-clusters">
            {(solution.clusters ?? []).map((c, i) => (
              <li key={String(c.id)} data-cluster={c.id}>
                <span class="swatch" style={{ background: categoryColour(i) }} aria-hidden="true" />
                <strong>Cluster {c.id}</strong>: {c.members.length === 0 ? <span class="muted">empty</span> : c.members.join(', ')}
              </li>
            ))}
          </ol>
          <SolveFacts
            prefix="clustering"
            response={result.response}
            extra={[
              { term: 'Inertia (exact, of these clusters)', value: formatFigure(solution.inertia, 3), id: 'clustering-inertia' },
              { term: 'Agreement with exact nearest centroids', value: formatPercent(solution.assignment_agreement) },
              { term: 'Iterations', value: formatCount(solution.iterations) },
            ]}
            optimum={{ term: `Classical inertia (${solution.classical_scope ?? 'classical k-means'})`, value: formatFigure(solution.classical_inertia, 3) }}
          />
        </section>
      )}
    </div>
  );
}

interface Point {
  id: string;
  features: number[];
}

/** Clustering's fields: the points one per line ("id: x, y", any number of features), k and the iteration limit. */
function ClusteringFields({ problem, update }: { problem: Record<string, unknown>; update: (p: Record<string, unknown>) => void }) {
  const data = listOf(field(problem, 'data')) as unknown as Point[];
  const read = (line: string): Point | LineError => {
    const colon = line.indexOf(':');
    if (colon <= 0) return { error: 'expected "name: x, y"' };
    const features = readNumbers(line.slice(colon + 1));
    return typeof features === 'string' ? { error: features } : { id: line.slice(0, colon).trim(), features };
  };
  return (
    <>
      <LinesField<Point>
        id="clustering-points"
        label={`Points, one per line (${data.length})`}
        hint='As "name: x, y" — more numbers for more features; the chart shows the first two.'
        items={data}
        show={(p) => `${p.id}: ${Array.isArray(p.features) ? p.features.join(', ') : ''}`}
        read={read}
        onValue={(items) => update({ ...problem, data: items })}
      />
      <div class="row">
        <NumberField id="clustering-k" class="inline" label="Clusters (k)" integer min={1} value={numberOr(field(problem, 'k'), Number.NaN)} onValue={(v) => update({ ...problem, k: v })} />
        <NumberField id="clustering-iterations" class="inline" label="Most iterations" integer min={1} max={1000} value={numberOr(field(problem, 'max_iterations'), Number.NaN)} onValue={(v) => update({ ...problem, max_iterations: v })} />
      </div>
    </>
  );
}
