import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { postJson } from './api-client.ts';

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
 * The form every solver page shares: a worked example to start from, the problem as editable
 * JSON (the API's own shape, so what works here works from code), shots and seed; it posts to
 * `/api/solve` and hands the problem and the answer to the page, which draws them. Element ids
 * start with `prefix` (`route-problem`, `route-solve`, …). `prepare` may add to the problem
 * before it is sent (the classification page adds a grid of points to predict); the page is
 * handed what was sent, not what was typed.
 */
export function SolveForm<P, S>(props: {
  prefix: string;
  solver: string;
  description: ComponentChildren;
  examples: readonly SolveExample[];
  onSolved: (problem: P, response: SolveResponse<S>) => void;
  prepare?: (problem: P) => P;
}) {
  const { prefix } = props;
  const [text, setText] = useState(JSON.stringify(props.examples[0]!.problem, null, 2));
  const [shots, setShots] = useState(1024);
  const [seed, setSeed] = useState('7');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | undefined>();

  const solve = async (event: Event) => {
    event.preventDefault();
    let problem: P;
    try {
      problem = JSON.parse(text) as P;
    } catch (e) {
      setError(`The problem is not valid JSON: ${(e as Error).message}`);
      return;
    }
    setBusy(true);
    setError(undefined);
    try {
      const sent = props.prepare === undefined ? problem : props.prepare(problem);
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
      <form class="panel" onSubmit={solve}>
        <div class="row">
          <label for={`${prefix}-example`}>Example</label>
          <select id={`${prefix}-example`} onChange={(e) => setText(JSON.stringify(props.examples[Number(e.currentTarget.value)]!.problem, null, 2))}>
            {props.examples.map((ex, i) => <option value={i} key={ex.name}>{ex.name}</option>)}
          </select>
        </div>
        <label for={`${prefix}-problem`}>{props.description}</label>
        <textarea id={`${prefix}-problem`} rows={12} spellcheck={false} value={text} onInput={(e) => setText(e.currentTarget.value)} />
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
