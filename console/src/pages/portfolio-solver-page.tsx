import { useMemo, useState } from 'preact/hooks';
import { CountsHistogram, OutcomeTable, type MeasurementCounts } from '../counts-histogram.tsx';
import { PortfolioChart, type PortfolioAsset } from '../portfolio-chart.tsx';
import { SolveFacts, type Certificate } from '../solve-facts.tsx';
import { SolveForm, type SolveExample, type SolveResponse } from '../solve-form.tsx';

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
              <CountsHistogram id="portfolio-histogram" counts={solution.measurement_counts} title="QAOA measurement histogram of the asset selections" />
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
              { term: 'Expected return', value: solution.expected_return, id: 'portfolio-return' },
              { term: 'Risk', value: solution.risk, id: 'portfolio-risk' },
              { term: 'Objective', value: solution.objective },
            ]}
          />
        </section>
      )}
    </div>
  );
}
