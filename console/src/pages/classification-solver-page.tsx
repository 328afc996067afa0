import { useMemo, useRef, useState } from 'preact/hooks';
import { categoryColour } from '../palette.ts';
import { blobs } from '../sample-data.ts';
import { ScatterChart, type ScatterGroup } from '../scatter-chart.tsx';
import { SolveFacts, type Certificate } from '../solve-facts.tsx';
import { SolveForm, type SolveExample, type SolveResponse } from '../solve-form.tsx';
import { GRID, withGrid, type GridPlan } from '../classification-grid.ts';
import { PREDICT_MAX } from '../solve-limits.ts';
import { field, LinesField, listOf, readNumbers, type LineError } from '../solve-fields.tsx';
import { formatCount, formatPercent } from '../format.ts';

const labelled = (points: number[][], labels: readonly string[], perLabel: number) => points.map((features, i) => ({ features, label: labels[Math.floor(i / perLabel)]! }));

const EXAMPLES: readonly SolveExample[] = [
  {
    name: 'Two classes, 24 training points',
    problem: {
      type: 'classification',
      training_data: labelled(blobs([[1, 1], [4, 3.5]], 12, 0.8, 3), ['low', 'high'], 12),
      predict: [{ features: [1.5, 1.2] }, { features: [3.8, 3.1] }, { features: [2.6, 2.3] }],
    },
  },
  {
    name: 'Three classes, 30 training points',
    problem: {
      type: 'classification',
      training_data: labelled(blobs([[0, 0], [4, 0], [2, 3.5]], 10, 0.7, 8), ['red', 'green', 'blue'], 10),
      predict: [{ features: [2, 1] }, { features: [0.5, 3] }],
    },
  },
];

interface ClassificationProblem {
  training_data: { features: number[]; label: string }[];
  predict: { features: number[] }[];
}

interface ClassificationSolution extends Certificate {
  predictions?: { label: string; confidence: number }[];
  labels?: string[];
  training_accuracy?: number;
  cross_validated_accuracy?: number;
  /** Support vectors per one-vs-rest model, as the solver returns them. */
  support_vectors?: Array<{ label: string; count: number }>;
  circuits_run?: number;
}

export function ClassificationSolverPage() {
  const [result, setResult] = useState<{ problem: ClassificationProblem; response: SolveResponse<ClassificationSolution>; plan: GridPlan | null } | undefined>();
  const plan = useRef<GridPlan | null>(null);
  const [regions, setRegions] = useState(true);

  const prepare = (problem: ClassificationProblem): ClassificationProblem => {
    if (!regions) {
      plan.current = { skipped: 'the decision regions were turned off in the form' };
      return problem;
    }
    const prepared = withGrid(problem);
    plan.current = prepared.plan;
    return prepared.problem as ClassificationProblem;
  };

  const solution = result?.response.solution;
  const labels = useMemo(() => [...new Set(result?.problem.training_data.map((t) => t.label) ?? [])], [result]);
  const groups = useMemo((): ScatterGroup[] => {
    if (result === undefined || result.plan === null || 'skipped' in result.plan) return [];
    const { problem, response, plan: drawn } = result;
    const predictions = response.solution.predictions ?? [];
    const colourOf = (label: string) => categoryColour(Math.max(0, labels.indexOf(label)));
    const regions = labels.map((label) => {
      const points = problem.predict.slice(drawn.own).flatMap((p, i) => (predictions[drawn.own + i]?.label === label ? [{ x: p.features[0]!, y: p.features[1]! }] : []));
      return { label: `predicted ${label} (${points.length} grid points)`, colour: colourOf(label), fill: `${colourOf(label)}40`, outline: false, size: 13, points };
    });
    const training = labels.map((label) => ({
      label: `training ${label}`,
      colour: colourOf(label),
      size: 9,
      points: problem.training_data.filter((t) => t.label === label).map((t) => ({ x: t.features[0]!, y: t.features[1]! })),
    }));
    const own = {
      label: 'your points (named by their prediction)',
      colour: '#111111',
      fill: '#ffffff',
      size: 13,
      named: true,
      points: problem.predict.slice(0, drawn.own).map((p, i) => ({ x: p.features[0]!, y: p.features[1]!, name: `${i}: ${predictions[i]?.label ?? '?'}` })),
    };
    return [...regions, ...training, own];
  }, [result, labels]);

  const drawn = result?.plan != null && 'own' in result.plan ? result.plan : null;
  const own = result === undefined ? 0 : drawn?.own ?? result.problem.predict.length;
  return (
    <div class="solver">
      <SolveForm<ClassificationProblem, ClassificationSolution>
        prefix="classification"
        solver="qsvm"
        description={<>Problem (<code>qsvm</code> / <code>classification</code>; with 2 features the page adds a grid of up to {GRID} × {GRID} points to <code>predict</code> to draw the regions, fewer where <code>predict</code> would pass {PREDICT_MAX})</>}
        examples={EXAMPLES}
        prepare={prepare}
        fields={(problem, update) => <ClassificationFields problem={problem} update={update} regions={regions} setRegions={setRegions} />}
        onSolved={(problem, response) => setResult({ problem, response, plan: plan.current })}
      />
      {result !== undefined && solution !== undefined && (
        <section class="panel" aria-labelledby="classification-result-title" id="classification-result">
          <h2 id="classification-result-title">Result <span class="muted">{result.response.id}</span></h2>
          {drawn !== null
            ? (
                <>
                  <ScatterChart
                    id="classification-chart"
                    groups={groups}
                    xLabel="feature 0"
                    yLabel="feature 1"
                    square
                    description={`Decision regions: ${drawn.points} grid points coloured by the label the solver predicted for each, the ${result.problem.training_data.length} training points, and your ${drawn.own} points`}
                  />
                  <p class="muted" id="classification-grid-note">
                    Each faint dot is one of the {drawn.points} grid points ({drawn.side} × {drawn.side}) the page added to <code>predict</code>, coloured by the label the solver returned for it: the regions are the solver's own predictions, not an interpolation.
                    The circuits, shots and time below include the grid's kernel circuits.
                  </p>
                </>
              )
            : <p class="muted" id="classification-no-grid">{result.plan !== null && 'skipped' in result.plan ? `No regions: ${result.plan.skipped}.` : 'Regions are drawn for 2-D features only; the predictions are listed below.'}</p>}
          <div class="table-scroll" tabIndex={0} role="region" aria-label="Predictions for your points">
            <table id="classification-predictions">
              <caption>Your points</caption>
              <thead><tr><th scope="col">#</th><th scope="col">Features</th><th scope="col">Label</th><th scope="col">Confidence</th></tr></thead>
              <tbody>
                {result.problem.predict.slice(0, own).map((p, i) => (
                  <tr key={i}>
                    <th scope="row">{i}</th>
                    <td>{p.features.join(', ')}</td>
                    <td>{solution.predictions?.[i]?.label ?? '—'}</td>
                    <td>{formatPercent(solution.predictions?.[i]?.confidence)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <SolveFacts
            prefix="classification"
            response={result.response}
            extra={[
              { term: 'Training accuracy', value: formatPercent(solution.training_accuracy), id: 'classification-training-accuracy' },
              { term: 'Support vectors', value: solution.support_vectors?.map((s) => `${s.label}: ${s.count}`).join(', '), id: 'classification-support-vectors' },
              { term: drawn === null ? 'Circuits run' : `Circuits run (including the ${drawn.points} grid points')`, value: formatCount(solution.circuits_run), id: 'classification-circuits' },
            ]}
            optimum={{ term: 'Cross-validated accuracy (held-out folds)', value: formatPercent(solution.cross_validated_accuracy) }}
          />
        </section>
      )}
    </div>
  );
}

/** Classification's fields: the training points with their labels, the points to predict, and whether the page adds the grid that draws the regions. */
function ClassificationFields(props: { problem: Record<string, unknown>; update: (p: Record<string, unknown>) => void; regions: boolean; setRegions: (on: boolean) => void }) {
  const { problem, update } = props;
  const training = listOf(field(problem, 'training_data')) as unknown as { features: number[]; label: string }[];
  const predict = listOf(field(problem, 'predict')) as unknown as { features: number[] }[];
  const readTraining = (line: string): { features: number[]; label: string } | LineError => {
    const colon = line.indexOf(':');
    if (colon <= 0) return { error: 'expected "label: x, y"' };
    const features = readNumbers(line.slice(colon + 1));
    return typeof features === 'string' ? { error: features } : { label: line.slice(0, colon).trim(), features };
  };
  const readPredict = (line: string): { features: number[] } | LineError => {
    const features = readNumbers(line);
    return typeof features === 'string' ? { error: features } : { features };
  };
  const show = (features: unknown) => (Array.isArray(features) ? features.join(', ') : '');
  return (
    <>
      <div class="two-columns">
        <LinesField<{ features: number[]; label: string }>
          id="classification-training"
          label={`Training points, one per line (${training.length})`}
          hint='As "label: x, y"; at least two labels.'
          items={training}
          show={(t) => `${t.label}: ${show(t.features)}`}
          read={readTraining}
          onValue={(items) => update({ ...problem, training_data: items })}
        />
        <LinesField<{ features: number[] }>
          id="classification-predict"
          label={`Points to predict (${predict.length})`}
          hint='As "x, y", with as many numbers as the training points have.'
          items={predict}
          show={(p) => show(p.features)}
          read={readPredict}
          onValue={(items) => update({ ...problem, predict: items })}
        />
      </div>
      <div class="row">
        <label class="choice">
          <input type="checkbox" id="classification-regions" checked={props.regions} onChange={(e) => props.setRegions(e.currentTarget.checked)} />
          Draw the decision regions (adds a grid of up to {GRID} × {GRID} points to predict; 2-D points only)
        </label>
      </div>
    </>
  );
}
