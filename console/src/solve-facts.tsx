import type { ComponentChildren } from 'preact';
import { formatCount, formatFigure, formatValue } from './format.ts';
import type { SolveResponse } from './solve-form.tsx';

export function Definition(props: { term: ComponentChildren; value: unknown; id?: string }) {
  return (
    <div class="fact">
      <dt>{props.term}</dt>
      <dd id={props.id}>{typeof props.value === 'number' ? formatFigure(props.value) : formatValue(props.value)}</dd>
    </div>
  );
}

/**
 * The gap as a reader takes it: a relative gap as a percentage (reported rounded up to 3
 * decimals, so one decimal of a percent shows it whole), an absolute one in the objective's units,
 * to 4 significant decimals (a small absolute gap would read "0.0 %" as a percentage).
 */
export function gapText(gap: number | undefined, kind: 'relative' | 'absolute'): string | undefined {
  if (gap === undefined) return undefined;
  return kind === 'relative' ? `${(gap * 100).toFixed(1)} %` : `${formatFigure(gap, 4)} (objective units)`;
}

/** What every solver reports beside its answer: the classical certificate and `meta`. */
export interface Certificate {
  method?: string;
  feasible?: boolean;
  violations?: unknown;
  infeasible_reason?: string;
  classical_optimum?: unknown;
  optimality_gap?: number;
  classical_optimum_scope?: string;
  quantum?: unknown;
  circuit?: unknown;
}

/** `meta` as people read it: counts as integers, energy to 3 decimals, time in ms. `optimal_count` is not here: see OptimalCount. */
export function metaFacts(meta: SolveResponse<unknown>['meta']): { term: string; value: string; id: string }[] {
  return [
    { term: 'Shots per circuit', value: formatCount(meta.shots), id: 'shots' },
    { term: 'Energy (cost Hamiltonian expectation)', value: formatFigure(meta.energy), id: 'energy' },
    { term: 'Circuit depth', value: formatCount(meta.depth), id: 'depth' },
    { term: 'Time', value: `${formatCount(meta.elapsed_ms)} ms`, id: 'elapsed' },
  ];
}

/**
 * The certificate (how far the answer is from the enumerated optimum, when the instance is
 * small enough to enumerate) beside `meta`, every figure rounded for reading; the whole answer
 * with its exact values folded away under it. `extra` are the solver's own headline figures
 * (cost, return and risk), shown first, already formatted. `optimum` replaces the
 * classical-optimum row for solvers whose classical check is something else (Grover's scan of
 * the records, k-means' exact-distance inertia). `gap` says what `optimality_gap` measures: a
 * share of the optimum (routes: shown as a percentage) or a difference in the objective's own
 * units (portfolios). `meta.optimal_count` is left out of the list on purpose: the page shows
 * one optimal count, with what it counts (counts-histogram.tsx, OptimalCount).
 */
export function SolveFacts(props: {
  prefix: string;
  response: SolveResponse<Certificate>;
  extra?: { term: string; value: unknown; id?: string }[];
  optimum?: { term: string; value: unknown };
  gap?: 'relative' | 'absolute';
  children?: ComponentChildren;
}) {
  const { solution, meta } = props.response;
  const optimum = solution.classical_optimum;
  return (
    <>
      <div class="two-columns">
        <div>
          <h3>Classical certificate</h3>
          <dl class="facts" id={`${props.prefix}-certificate`}>
            <Definition term="Method" value={solution.method} />
            {props.extra?.map((e) => <Definition term={e.term} value={e.value} id={e.id} key={e.term} />)}
            {props.optimum !== undefined
              ? <Definition term={props.optimum.term} value={props.optimum.value} id={`${props.prefix}-optimum`} />
              : <Definition term="Classical optimum" value={optimum === undefined ? 'not computed (too large to enumerate)' : optimum} id={`${props.prefix}-optimum`} />}
            <Definition term="Optimality gap" value={gapText(solution.optimality_gap, props.gap ?? 'relative')} id={`${props.prefix}-gap`} />
            {solution.classical_optimum_scope !== undefined && <Definition term="Scope" value={solution.classical_optimum_scope} />}
            <Definition term="Feasible" value={solution.feasible === undefined ? undefined : solution.feasible ? 'yes' : 'no'} />
            {solution.infeasible_reason !== undefined && <Definition term="Why not" value={solution.infeasible_reason} />}
            {Array.isArray(solution.violations) && solution.violations.length > 0 && <Definition term="Violations" value={solution.violations.join('; ')} />}
          </dl>
        </div>
        <div>
          <h3>Run</h3>
          <dl class="facts" id={`${props.prefix}-meta`}>
            {metaFacts(meta).map((f) => <Definition term={f.term} value={f.value} id={`${props.prefix}-meta-${f.id}`} key={f.id} />)}
            {props.children}
          </dl>
        </div>
      </div>
      <details>
        <summary>Raw response (exact values)</summary>
        <pre id={`${props.prefix}-response-json`}>{JSON.stringify(props.response, null, 2)}</pre>
      </details>
    </>
  );
}
