/**
 * The inputs the solver forms are built from. Each shows a value of the problem and hands a new
 * value back as soon as what is typed reads as one; while it does not ("52." half typed, a line
 * missing its comma) the input keeps the text, is marked invalid and says why, and the problem
 * (and so the raw JSON) keeps its last good value.
 */
import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';

/** Own-property read of a problem field (the problem is user input: never its prototype). */
export function field(value: unknown, key: string): unknown {
  return typeof value === 'object' && value !== null && Object.hasOwn(value, key) ? (value as Record<string, unknown>)[key] : undefined;
}

export function numberOr(value: unknown, fallback: number): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : fallback;
}

export function listOf(value: unknown): Record<string, unknown>[] {
  return Array.isArray(value) ? value.filter((v): v is Record<string, unknown> => typeof v === 'object' && v !== null) : [];
}

/** A draft kept as typed while it does not parse; reset when the value changes from outside (the raw JSON, an example). */
function useDraft<T>(value: T, show: (v: T) => string, read: (text: string) => T | string, same: (a: T, b: T) => boolean, onValue: (v: T) => void) {
  const [draft, setDraft] = useState(show(value));
  const [problem, setProblem] = useState<string | undefined>();
  useEffect(() => {
    const parsed = read(draft);
    if (typeof parsed === 'string' || !same(parsed, value)) {
      setDraft(show(value));
      setProblem(undefined);
    }
    // Only an outside change of the value resets the draft.
  }, [show(value)]);
  const onInput = (text: string) => {
    setDraft(text);
    const parsed = read(text);
    if (typeof parsed === 'string') setProblem(parsed);
    else {
      setProblem(undefined);
      onValue(parsed);
    }
  };
  return { draft, problem, onInput };
}

export function NumberField(props: { id: string; label: ComponentChildren; value: number | undefined; onValue: (v: number) => void; step?: string; min?: number; max?: number; integer?: boolean; class?: string; hideLabel?: boolean }) {
  const read = (text: string): number | string => {
    const n = Number(text);
    if (text.trim() === '' || !Number.isFinite(n)) return 'a number is needed';
    if (props.integer === true && !Number.isInteger(n)) return 'a whole number is needed';
    return n;
  };
  const { draft, problem, onInput } = useDraft(props.value ?? Number.NaN, (v) => (Number.isFinite(v) ? String(v) : ''), read, (a, b) => a === b, props.onValue);
  return (
    <div class={`field ${props.class ?? ''}`}>
      <label for={props.id} class={props.hideLabel === true ? 'visually-hidden' : undefined}>{props.label}</label>
      <input id={props.id} type="number" step={props.step ?? 'any'} min={props.min} max={props.max} value={draft} aria-invalid={problem !== undefined} onInput={(e) => onInput(e.currentTarget.value)} />
      {problem !== undefined && <span class="field-error" role="status">{problem}</span>}
    </div>
  );
}

export function TextField(props: { id: string; label: ComponentChildren; value: string; onValue: (v: string) => void; class?: string; placeholder?: string; hideLabel?: boolean }) {
  return (
    <div class={`field ${props.class ?? ''}`}>
      <label for={props.id} class={props.hideLabel === true ? 'visually-hidden' : undefined}>{props.label}</label>
      <input id={props.id} type="text" value={props.value} placeholder={props.placeholder} onInput={(e) => props.onValue(e.currentTarget.value)} />
    </div>
  );
}

/** What is wrong with one line of a LinesField (an object, so a list of strings can be read too). */
export interface LineError {
  error: string;
}

function isLineError(value: unknown): value is LineError {
  return typeof value === 'object' && value !== null && Object.hasOwn(value, 'error') && typeof (value as LineError).error === 'string';
}

/**
 * A list edited as lines of text (points, records): `read` turns one line into an item or says
 * what is wrong with it; the first bad line is named and the list keeps its last good value.
 */
export function LinesField<T>(props: { id: string; label: ComponentChildren; hint: ComponentChildren; items: readonly T[]; show: (item: T) => string; read: (line: string) => T | LineError; onValue: (items: T[]) => void; rows?: number }) {
  const readAll = (text: string): T[] | string => {
    const items: T[] = [];
    const lines = text.split('\n');
    for (const [i, line] of lines.entries()) {
      if (line.trim() === '' && i === lines.length - 1) continue;
      const item = props.read(line);
      if (isLineError(item)) return `line ${i + 1}: ${item.error}`;
      items.push(item);
    }
    return items;
  };
  const show = (items: readonly T[]) => items.map(props.show).join('\n');
  const { draft, problem, onInput } = useDraft(props.items as T[], show, readAll, (a, b) => show(a) === show(b), props.onValue);
  const hint = `${props.id}-hint`;
  return (
    <div class="field wide">
      <label for={props.id}>{props.label}</label>
      <textarea id={props.id} rows={props.rows ?? 8} spellcheck={false} value={draft} aria-invalid={problem !== undefined} aria-describedby={hint} onInput={(e) => onInput(e.currentTarget.value)} />
      <span class="muted" id={hint}>{props.hint}</span>
      {problem !== undefined && <span class="field-error" role="status">Not used yet: {problem}</span>}
    </div>
  );
}

/** Comma-separated numbers ("1.5, 2") as a list, or what is wrong. */
export function readNumbers(text: string): number[] | string {
  const parts = text.split(',').map((p) => p.trim());
  if (parts.some((p) => p === '')) return 'expected numbers separated by commas';
  const values = parts.map(Number);
  const bad = parts.find((_, i) => !Number.isFinite(values[i]));
  return bad === undefined ? values : `"${bad}" is not a number`;
}

/** `options.include_counts` / `counts_top_k`: whether the answer brings the measurement histogram, and how many outcomes it lists. */
export function CountsOptions(props: { prefix: string; problem: Record<string, unknown>; update: (p: Record<string, unknown>) => void }) {
  const options = (field(props.problem, 'options') ?? {}) as Record<string, unknown>;
  const on = options['include_counts'] === true;
  const set = (next: Record<string, unknown>) => {
    const merged = { ...options, ...next };
    if (merged['include_counts'] !== true) delete merged['counts_top_k'];
    const rest = { ...props.problem };
    delete rest['options'];
    props.update(Object.keys(merged).length === 0 || (Object.keys(merged).length === 1 && merged['include_counts'] === false) ? rest : { ...rest, options: merged });
  };
  return (
    <div class="row">
      <label class="choice"><input type="checkbox" id={`${props.prefix}-counts`} checked={on} onChange={(e) => set({ include_counts: e.currentTarget.checked })} /> Measurement histogram</label>
      {on && <NumberField id={`${props.prefix}-top-k`} class="inline" label="Outcomes listed (counts_top_k)" integer min={1} max={256} value={numberOr(options['counts_top_k'], 32)} onValue={(v) => set({ counts_top_k: v })} />}
    </div>
  );
}
