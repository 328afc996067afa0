/**
 * The raw JSON view of a solver form: the problem as typed, read back into an object, and what
 * is wrong with it in plain words when it cannot be (where, and what was expected), never the
 * parser's "Unexpected token } in JSON at position 41".
 */
export type ParsedProblem = { ok: true; problem: Record<string, unknown> } | { ok: false; message: string };

/** Line and column (1-based) of a character offset. */
function lineAndColumn(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, offset).split('\n');
  return { line: before.length, column: before[before.length - 1]!.length + 1 };
}

export function parseProblem(text: string): ParsedProblem {
  if (text.trim() === '') return { ok: false, message: 'The raw JSON is empty: write the problem as a JSON object, { … }.' };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    const raw = (e as Error).message;
    const position = /at position (\d+)/.exec(raw);
    // V8's own words, less its offsets: "Expected ',' or '}' after property value".
    const what = raw.replace(/\s*\(line \d+ column \d+\)/, '').replace(/\s*in JSON at position \d+/, '').replace(/^JSON\.parse: /, '');
    const where = position === null ? 'at the end' : (() => {
      const { line, column } = lineAndColumn(text, Number(position[1]));
      return `on line ${line}, column ${column}`;
    })();
    return { ok: false, message: `The raw JSON is not valid ${where}: ${what.charAt(0).toLowerCase()}${what.slice(1)}.` };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return { ok: false, message: 'The raw JSON must be one object, { … }, not a list or a single value.' };
  return { ok: true, problem: value as Record<string, unknown> };
}

/** The problem as the raw JSON view shows it. */
export function problemText(problem: unknown): string {
  return JSON.stringify(problem, null, 2);
}
