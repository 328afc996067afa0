import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { postJson } from './api-client.ts';
import { parseProblem, problemText } from './raw-json.ts';

export interface SolveExample {
  name: string;
  problem: object;
}

export interface SolveResponse<S> {
  id: string;
  status: string;
  solution: S;
  meta: { shots: number; optimal_count: number; energy: number; depth: number; elapsed_ms: number };
}

/**
 * The form every solver page shares: a worked example to start from; the problem's fields as a
 * form (`fields`, the page's own: stops, assets, records, points); the same problem as
 * "Advanced: raw JSON" (the API's own shape, so what works here works from code), kept in step
 * both ways: a field edited rewrites the JSON, JSON that parses redraws the fields, and JSON
 * that does not is said inline in plain words while the fields keep the last good problem.
 * Then shots and seed; it posts to `/api/solve` and hands the problem and the answer to the
 * page, which draws them. Element ids start with `prefix` (`route-problem` is the raw JSON,
 * `route-solve`, …). `prepare` may add to the problem before it is sent (the classification page
 * adds a grid of points to predict); the page is handed what was sent, not what was typed.
 */
export function SolveForm<P, S>(props: {
  prefix: string;
  solver: string;
  description: ComponentChildren;
  examples: readonly SolveExample[];
  fields: (problem: Record<string, unknown>, update: (next: Record<string, unknown>) => void) => ComponentChildren;
  onSolved: (problem: P, response: SolveResponse<S>) => void;
  prepare?: (problem: P) => P;
}) {
  const { prefix } = props;
  const first = props.examples[0]!.problem as Record<string, unknown>;
  const [problem, setProblem] = useState<Record<string, unknown>>(first);
  const [text, setText] = useState(problemText(first));
  const [jsonError, setJsonError] = useState<string | undefined>();
  const [shots, setShots] = useState(1024);
  const [seed, setSeed] = useState('7');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | undefined>();

  const update = (next: Record<string, unknown>) => {
    setProblem(next);
    setText(problemText(next));
    setJsonError(undefined);
  };
  const edit = (typed: string) => {
    setText(typed);
    const parsed = parseProblem(typed);
    if (parsed.ok) {
      setProblem(parsed.problem);
      setJsonError(undefined);
    } else setJsonError(parsed.message);
  };

  const solve = async (event: Event) => {
    event.preventDefault();
    const parsed = parseProblem(text);
    if (!parsed.ok) {
      setError(`The problem is not sent: ${parsed.message}`);
      return;
    }
    setBusy(true);
    setError(undefined);
    try {
      const typed = parsed.problem as P;
      const sent = props.prepare === undefined ? typed : props.prepare(typed);
      const body = { solver: props.solver, problem: sent, shots, ...(seed.trim() === '' ? {} : { seed: Number(seed) }) };
      props.onSolved(sent, await postJson<SolveResponse<S>>('/api/solve', body));
    } catch (e) {
      setError((e as Error).message);
    } finally {
      setBusy(false);
    }
  };

  return (
    <>
      <form class="panel" onSubmit={solve} aria-labelledby={`${prefix}-form-title`}>
        <h2 id={`${prefix}-form-title`} class="form-title">{props.description}</h2>
        <div class="row">
          <label for={`${prefix}-example`}>Example</label>
          <select id={`${prefix}-example`} onChange={(e) => update(props.examples[Number(e.currentTarget.value)]!.problem as Record<string, unknown>)}>
            {props.examples.map((ex, i) => <option value={i} key={ex.name}>{ex.name}</option>)}
          </select>
        </div>
        <div class="problem-fields" id={`${prefix}-fields`}>{props.fields(problem, update)}</div>
        <details class="raw-json" id={`${prefix}-raw`}>
          <summary>Advanced: raw JSON</summary>
          <label for={`${prefix}-problem`}>The problem as the API takes it (edits here update the form above, and the form's edits show here)</label>
          <textarea id={`${prefix}-problem`} rows={12} spellcheck={false} value={text} aria-invalid={jsonError !== undefined} aria-describedby={`${prefix}-json-status`} onInput={(e) => edit(e.currentTarget.value)} />
          <p id={`${prefix}-json-status`} class={jsonError === undefined ? 'muted' : 'field-error'} role="status">{jsonError ?? 'Valid JSON.'}</p>
        </details>
        <div class="row">
          <label for={`${prefix}-shots`}>Shots</label>
          <input id={`${prefix}-shots`} type="number" min={1} max={65536} value={shots} onInput={(e) => setShots(Number(e.currentTarget.value) || 1)} />
          <label for={`${prefix}-seed`}>Seed</label>
          <input id={`${prefix}-seed`} class="narrow" type="text" inputMode="numeric" value={seed} onInput={(e) => setSeed(e.currentTarget.value)} />
          <button type="submit" id={`${prefix}-solve`} disabled={busy}>{busy ? 'Solving…' : 'Solve'}</button>
        </div>
      </form>
      {error !== undefined && <p role="alert" class="error" id={`${prefix}-error`}>{error}</p>}
    </>
  );
}
