import { useState } from 'preact/hooks';
import { CountsHistogram, OutcomeTable, type MeasurementCounts } from '../counts-histogram.tsx';
import { SolveFacts, type Certificate } from '../solve-facts.tsx';
import { SolveForm, type SolveExample, type SolveResponse } from '../solve-form.tsx';
import { CountsOptions, field, LinesField, NumberField, numberOr, TextField } from '../solve-fields.tsx';
import { formatCount, formatPercent } from '../format.ts';

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
        fields={(problem, update) => <GroverFields problem={problem} update={update} />}
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
                  <CountsHistogram
                    id="grover-histogram"
                    counts={solution.measurement_counts}
                    title="Grover measurement histogram"
                    meaning={{
                      outcome: 'the index of a record that matches the pattern',
                      answerShots: response.meta.optimal_count,
                      ...(solution.match_count === 0 ? { noneExist: 'no record matches the pattern, so no outcome is optimal' } : {}),
                    }}
                  />
                  <OutcomeTable id="grover-outcomes" counts={solution.measurement_counts} meaning={{ heading: 'Record', of: (o) => (typeof o['record'] === 'string' ? o['record'] : 'empty slot (past the last record)') }} />
                </>
              )
            : <p class="muted">No histogram: no circuit was sampled, or the problem did not set <code>options.include_counts</code>.</p>}
          <SolveFacts
            prefix="grover"
            response={response}
            extra={[
              { term: 'Confidence (shots on a match)', value: formatPercent(solution.confidence), id: 'grover-confidence' },
              { term: 'Matching records', value: formatCount(solution.match_count) },
              { term: 'Qubits', value: formatCount(solution.qubits) },
              { term: 'Grover iterations', value: formatCount(solution.iterations) },
              { term: 'Success probability (exact)', value: formatPercent(solution.success_probability) },
            ]}
            optimum={{ term: 'Classical check (a scan of every record)', value: solution.match_count === undefined ? undefined : `${solution.match_count} matching record${solution.match_count === 1 ? '' : 's'}` }}
          />
        </section>
      )}
    </div>
  );
}

/** The search's fields: the records one per line (the API's `dataset`, joined by newlines), the pattern and how sure the answer must be. */
function GroverFields({ problem, update }: { problem: Record<string, unknown>; update: (p: Record<string, unknown>) => void }) {
  const dataset = field(problem, 'dataset');
  const records = typeof dataset === 'string' ? dataset.split('\n') : [];
  const target = (field(problem, 'target') ?? {}) as Record<string, unknown>;
  const setTarget = (next: Record<string, unknown>) => update({ ...problem, target: { ...target, ...next } });
  return (
    <>
      <LinesField<string>
        id="grover-records"
        label={`Records, one per line (${records.length})`}
        hint="Record i is line i + 1; the search finds the index of a record that matches."
        items={records}
        show={(r) => r}
        read={(line) => line}
        onValue={(items) => update({ ...problem, dataset: items.join('\n') })}
      />
      <div class="row">
        <TextField id="grover-pattern" class="grow" label="Pattern (text to find, or /regular expression/flags)" value={typeof target['pattern'] === 'string' ? target['pattern'] : ''} onValue={(v) => setTarget({ pattern: v })} />
      </div>
      <div class="row">
        <NumberField id="grover-min-confidence" class="inline" label="Least confidence (0–1)" min={0} max={1} step="0.05" value={numberOr(target['min_confidence'], Number.NaN)} onValue={(v) => setTarget({ min_confidence: v })} />
        <NumberField id="grover-space" class="inline" label="Search space size" integer min={1} value={numberOr(field(problem, 'search_space_size'), Number.NaN)} onValue={(v) => update({ ...problem, search_space_size: v })} />
      </div>
      <CountsOptions prefix="grover" problem={problem} update={update} />
    </>
  );
}
