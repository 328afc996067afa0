import { useState } from 'preact/hooks';
import { CountsHistogram, OutcomeTable, type MeasurementCounts } from '../counts-histogram.tsx';
import { SolveFacts, type Certificate } from '../solve-facts.tsx';
import { SolveForm, type SolveExample, type SolveResponse } from '../solve-form.tsx';

const orders = Array.from({ length: 48 }, (_, i) => (i === 29 ? `order-${i} amount=9900 status=FRAUD` : `order-${i} amount=${100 + ((i * 37) % 400)} status=ok`));
const logs = Array.from({ length: 100 }, (_, i) => (i % 41 === 7 ? `2026-11-26T10:${String(i % 60).padStart(2, '0')} ERROR disk full on /var` : `2026-11-26T10:${String(i % 60).padStart(2, '0')} INFO request ${i} served`));

/** Worked examples; each asks for the measurement counts the histogram is drawn from. */
const EXAMPLES: readonly SolveExample[] = [
  {
    name: '48 orders, one FRAUD (6 qubits)',
    problem: { type: 'pattern_search', dataset: orders.join('\n'), target: { pattern: 'FRAUD', min_confidence: 0.5 }, search_space_size: 64, options: { include_counts: true, counts_top_k: 16 } },
  },
  {
    name: '100 log lines, a regular expression matching 3 (7 qubits)',
    problem: { type: 'pattern_search', dataset: logs.join('\n'), target: { pattern: '/error .* full/i', min_confidence: 0.5 }, search_space_size: 128, options: { include_counts: true, counts_top_k: 24 } },
  },
];

interface GroverSolution extends Certificate {
  found?: boolean;
  target_index?: number;
  record?: string;
  confidence?: number;
  match_count?: number;
  qubits?: number;
  iterations?: number;
  success_probability?: number;
  reason?: string;
  measurement_counts?: MeasurementCounts;
}

export function GroverSolverPage() {
  const [response, setResponse] = useState<SolveResponse<GroverSolution> | undefined>();
  const solution = response?.solution;
  return (
    <div class="solver">
      <SolveForm<object, GroverSolution>
        prefix="grover"
        solver="grover"
        description={<>Problem (<code>grover</code> / <code>pattern_search</code>; one record per line; <code>options.include_counts</code> returns the histogram)</>}
        examples={EXAMPLES}
        onSolved={(_problem, answer) => setResponse(answer)}
      />
      {response !== undefined && solution !== undefined && (
        <section class="panel" aria-labelledby="grover-result-title" id="grover-result">
          <h2 id="grover-result-title">Result <span class="muted">{response.id}</span></h2>
          <p id="grover-answer">
            {solution.found === true
              ? <>Record <strong>{solution.target_index}</strong>: <code>{solution.record}</code></>
              : <>Not found: {solution.reason ?? 'no reason given'}</>}
          </p>
          {solution.measurement_counts != null
            ? (
                <>
                  <CountsHistogram id="grover-histogram" counts={solution.measurement_counts} title="Grover measurement histogram" />
                  <OutcomeTable id="grover-outcomes" counts={solution.measurement_counts} meaning={{ heading: 'Record', of: (o) => (typeof o['record'] === 'string' ? o['record'] : 'empty slot (past the last record)') }} />
                </>
              )
            : <p class="muted">No histogram: no circuit was sampled, or the problem did not set <code>options.include_counts</code>.</p>}
          <SolveFacts
            prefix="grover"
            response={response}
            extra={[
              { term: 'Confidence (shots on a match)', value: solution.confidence, id: 'grover-confidence' },
              { term: 'Matching records', value: solution.match_count },
              { term: 'Qubits', value: solution.qubits },
              { term: 'Grover iterations', value: solution.iterations },
              { term: 'Success probability (exact)', value: solution.success_probability },
            ]}
            optimum={{ term: 'Classical check (a scan of every record)', value: solution.match_count === undefined ? undefined : `${solution.match_count} matching record${solution.match_count === 1 ? '' : 's'}` }}
          />
        </section>
      )}
    </div>
  );
}
