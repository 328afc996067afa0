import { formatValue } from './format.ts';
import type { SolveResponse } from './solve-form.tsx';

export function Definition(props: { term: string; value: unknown; id?: string }) {
  return (
    <div class="fact">
      <dt>{props.term}</dt>
      <dd id={props.id}>{formatValue(props.value)}</dd>
    </div>
  );
}

/**
 * The gap as a reader takes it: a relative gap as a percentage (reported rounded up to 3
 * decimals, so one decimal of a percent shows it whole), an absolute one as the solver gave it.
 */
export function gapText(gap: number | undefined, kind: 'relative' | 'absolute'): string | undefined {
  if (gap === undefined) return undefined;
  return kind === 'relative' ? `${(gap * 100).toFixed(1)} %` : `${gap} (objective units)`;
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

/**
 * The certificate (how far the answer is from the enumerated optimum, when the instance is
 * small enough to enumerate) beside `meta`, then the circuit figures folded away. `extra` are
 * the solver's own headline figures (cost, return and risk), shown first. `optimum` replaces the
 * classical-optimum row for solvers whose classical check is something else (Grover's scan of
 * the records, k-means' exact-distance inertia). `gap` says what `optimality_gap` measures: a
 * share of the optimum (routes: shown as a percentage) or a difference in the objective's own
 * units (portfolios: shown as reported, since a small absolute gap would read "0.0 %").
 */
export function SolveFacts(props: { prefix: string; response: SolveResponse<Certificate>; extra?: { term: string; value: unknown; id?: string }[]; optimum?: { term: string; value: unknown }; gap?: 'relative' | 'absolute' }) {
  const { solution, meta } = props.response;
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
              : <Definition term="Classical optimum" value={solution.classical_optimum === undefined ? 'not computed (too large to enumerate)' : solution.classical_optimum} id={`${props.prefix}-optimum`} />}
            <Definition term="Optimality gap" value={gapText(solution.optimality_gap, props.gap ?? 'relative')} id={`${props.prefix}-gap`} />
            {solution.classical_optimum_scope !== undefined && <Definition term="Scope" value={solution.classical_optimum_scope} />}
            <Definition term="Feasible" value={solution.feasible} />
            {solution.infeasible_reason !== undefined && <Definition term="Why not" value={solution.infeasible_reason} />}
            {solution.violations !== undefined && <Definition term="Violations" value={solution.violations} />}
          </dl>
        </div>
        <div>
          <h3>meta</h3>
          <dl class="facts" id={`${props.prefix}-meta`}>
            {Object.entries(meta).map(([key, value]) => <Definition term={key} value={value} key={key} />)}
          </dl>
        </div>
      </div>
      <details>
        <summary>Circuit and quantum figures</summary>
        <pre>{JSON.stringify({ quantum: solution.quantum, circuit: solution.circuit }, null, 2)}</pre>
      </details>
    </>
  );
}
