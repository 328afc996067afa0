import { useMemo, useState } from 'preact/hooks';
import { CountsHistogram, OutcomeTable, type MeasurementCounts } from '../counts-histogram.tsx';
import { PortfolioChart, type PortfolioAsset } from '../portfolio-chart.tsx';
import { SolveFacts, type Certificate } from '../solve-facts.tsx';
import { SolveForm, type SolveExample, type SolveResponse } from '../solve-form.tsx';
import { CountsOptions, field, listOf, NumberField, numberOr, TextField } from '../solve-fields.tsx';
import { formatFigure, formatPercent } from '../format.ts';

const ASSETS: PortfolioAsset[] = [
  { id: 'AAA', expected_return: 0.12, risk: 0.25 },
  { id: 'BBB', expected_return: 0.08, risk: 0.12 },
  { id: 'CCC', expected_return: 0.1, risk: 0.18 },
  { id: 'DDD', expected_return: 0.05, risk: 0.05 },
  { id: 'EEE', expected_return: 0.15, risk: 0.35 },
  { id: 'FFF', expected_return: 0.09, risk: 0.1 },
  { id: 'GGG', expected_return: 0.11, risk: 0.22 },
  { id: 'HHH', expected_return: 0.07, risk: 0.08 },
];

const EXAMPLES: readonly SolveExample[] = [
  {
    name: '8 assets, at most 3, risk ≤ 0.15, return ≥ 0.09',
    problem: { type: 'portfolio_allocation', assets: ASSETS, constraints: { max_assets: 3, max_risk: 0.15, min_return: 0.09 }, options: { include_counts: true } },
  },
  {
    name: '5 assets, at most 2, risk ≤ 0.2, return ≥ 0.1',
    problem: { type: 'portfolio_allocation', assets: ASSETS.slice(0, 5), constraints: { max_assets: 2, max_risk: 0.2, min_return: 0.1 } },
  },
];

interface PortfolioSolution extends Certificate {
  selected?: string[];
  expected_return?: number;
  risk?: number;
  objective?: number;
  measurement_counts?: MeasurementCounts;
}

interface PortfolioProblem {
  assets: PortfolioAsset[];
  constraints?: { max_assets?: number; max_risk?: number; min_return?: number };
}

export function PortfolioSolverPage() {
  const [result, setResult] = useState<{ problem: PortfolioProblem; response: SolveResponse<PortfolioSolution> } | undefined>();
  const solution = result?.response.solution;
  const selected = useMemo(() => new Set(solution?.selected ?? []), [solution]);
  const portfolio = useMemo(() => ({ risk: solution?.risk ?? 0, expected_return: solution?.expected_return ?? 0 }), [solution]);
  return (
    <div class="solver">
      <SolveForm<PortfolioProblem, PortfolioSolution>
        prefix="portfolio"
        solver="qubo"
        description={<>Problem (<code>qubo</code> / <code>portfolio_allocation</code>; equal weights over the selected assets)</>}
        examples={EXAMPLES}
        fields={(problem, update) => <PortfolioFields problem={problem} update={update} />}
        onSolved={(problem, response) => setResult({ problem, response })}
      />
      {result !== undefined && solution !== undefined && (
        <section class="panel" aria-labelledby="portfolio-result-title" id="portfolio-result">
          <h2 id="portfolio-result-title">Result <span class="muted">{result.response.id}</span></h2>
          <PortfolioChart
            assets={result.problem.assets}
            selected={selected}
            portfolio={portfolio}
            {...(result.problem.constraints?.max_risk === undefined ? {} : { maxRisk: result.problem.constraints.max_risk })}
            {...(result.problem.constraints?.min_return === undefined ? {} : { minReturn: result.problem.constraints.min_return })}
          />
          <p id="portfolio-selected">Selected: <strong>{solution.selected?.length ? solution.selected.join(', ') : 'none'}</strong></p>
          {solution.measurement_counts !== undefined && (
            <>
              <h3>QAOA measurements</h3>
              <CountsHistogram
                id="portfolio-histogram"
                counts={solution.measurement_counts}
                title="QAOA measurement histogram of the asset selections"
                meaning={{ outcome: 'a selection of assets whose objective equals the enumerated optimum', answerShots: result.response.meta.optimal_count, answerShotsNote: '0 when the selection came from enumeration, not from a measured one' }}
              />
              <OutcomeTable
                id="portfolio-outcomes"
                counts={solution.measurement_counts}
                meaning={{ heading: 'Selection (qubit i = asset i)', of: (o) => `${(o['selected'] as string[] | undefined)?.join(', ') || 'none'}${o['feasible'] === false ? ' (infeasible)' : ''}` }}
              />
            </>
          )}
          <SolveFacts
            prefix="portfolio"
            response={result.response}
            gap="absolute"
            extra={[
              { term: 'Expected return', value: formatPercent(solution.expected_return), id: 'portfolio-return' },
              { term: 'Risk', value: formatPercent(solution.risk), id: 'portfolio-risk' },
              { term: 'Objective', value: formatFigure(solution.objective, 4) },
            ]}
            optimum={{ term: 'Classical optimum (every selection enumerated)', value: optimumText(solution.classical_optimum) }}
          />
        </section>
      )}
    </div>
  );
}

/** `classical_optimum` of a portfolio answer ({selected, objective}, null, or absent) in words. */
function optimumText(optimum: unknown): string {
  if (optimum === null) return 'no selection meets the constraints';
  const selected = field(optimum, 'selected');
  const objective = field(optimum, 'objective');
  if (!Array.isArray(selected)) return 'not computed (too many assets to enumerate)';
  return `${selected.join(', ') || 'none'} (objective ${typeof objective === 'number' ? formatFigure(objective, 4) : '—'})`;
}

/** The portfolio problem's fields: each asset's expected return and risk, and the budget (how many assets, how much risk, what return). */
function PortfolioFields({ problem, update }: { problem: Record<string, unknown>; update: (p: Record<string, unknown>) => void }) {
  const assets = listOf(field(problem, 'assets')) as unknown as PortfolioAsset[];
  const constraints = (field(problem, 'constraints') ?? {}) as Record<string, unknown>;
  const setAsset = (i: number, change: Partial<PortfolioAsset>) => update({ ...problem, assets: assets.map((a, j) => (j === i ? { ...a, ...change } : a)) });
  const setConstraints = (next: Record<string, unknown>) => update({ ...problem, constraints: { ...constraints, ...next } });
  const addAsset = () => {
    let n = assets.length + 1;
    while (assets.some((a) => a.id === `A${n}`)) n++;
    update({ ...problem, assets: [...assets, { id: `A${n}`, expected_return: 0.1, risk: 0.2 }] });
  };
  return (
    <>
      <div class="table-scroll" tabIndex={0} role="region" aria-label="Assets">
        <table id="portfolio-assets" class="form-table">
          <caption>Assets (returns and risk as fractions: 0.12 is 12 %)</caption>
          <thead><tr><th scope="col">Asset</th><th scope="col">Expected return</th><th scope="col">Risk</th><th scope="col"><span class="visually-hidden">Remove</span></th></tr></thead>
          <tbody>
            {assets.map((a, i) => (
              <tr key={i}>
                <td><TextField id={`portfolio-asset-${i}-id`} hideLabel label={`Name of asset ${i + 1}`} value={String(a.id ?? '')} onValue={(v) => setAsset(i, { id: v })} /></td>
                <td><NumberField id={`portfolio-asset-${i}-return`} hideLabel label={`Expected return of ${a.id}`} value={numberOr(a.expected_return, Number.NaN)} onValue={(v) => setAsset(i, { expected_return: v })} /></td>
                <td><NumberField id={`portfolio-asset-${i}-risk`} hideLabel label={`Risk of ${a.id}`} min={0} value={numberOr(a.risk, Number.NaN)} onValue={(v) => setAsset(i, { risk: v })} /></td>
                <td><button type="button" class="small" aria-label={`Remove ${a.id}`} onClick={() => update({ ...problem, assets: assets.filter((_, j) => j !== i) })}>Remove</button></td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <div class="row"><button type="button" id="portfolio-add-asset" onClick={addAsset}>Add asset</button></div>
      <fieldset>
        <legend>Budget</legend>
        <div class="row">
          <NumberField id="portfolio-max-assets" class="inline" label="At most this many assets" integer min={1} value={numberOr(constraints['max_assets'], Number.NaN)} onValue={(v) => setConstraints({ max_assets: v })} />
          <NumberField id="portfolio-max-risk" class="inline" label="Risk at most" min={0} value={numberOr(constraints['max_risk'], Number.NaN)} onValue={(v) => setConstraints({ max_risk: v })} />
          <NumberField id="portfolio-min-return" class="inline" label="Return at least" value={numberOr(constraints['min_return'], Number.NaN)} onValue={(v) => setConstraints({ min_return: v })} />
        </div>
      </fieldset>
      <CountsOptions prefix="portfolio" problem={problem} update={update} />
    </>
  );
}
