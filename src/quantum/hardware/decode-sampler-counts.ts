/**
 * Reads a Sampler V2 results body (`GET /jobs/{id}/results`) into counts the solvers can trust.
 * The counts decide the answer (a route, a selection, a match), so a value that could not have
 * come from the submitted circuit is refused rather than decoded: a bitstring wider than the
 * register would alias onto a valid outcome once the solver masks its bits, and a non-integer or
 * negative count, no shots at all, or more shots than were asked for would turn into confidences
 * and counts nobody measured. Every refusal is a `malformed` message (502
 * `substrate_provider_error`) naming what was wrong.
 *
 * The body is walked by hand, not through zod records: register names and count keys are the
 * provider's, so only own properties of the parsed JSON are read (a `__proto__` key is just an
 * unreadable outcome), and the counts go into a Map.
 */
export interface SamplerCountsExpectation {
  /** Width of the classical register the circuit measures into (`bit[n] c`). */
  bits: number;
  /** Shots requested: the results may hold fewer (a provider may drop some), never more. */
  shots: number;
}

export interface DecodedCounts {
  /** Register value (bit i = c[i]) → shots. */
  counts: Map<number, number>;
  /** Shots in the results. */
  total: number;
}

/** Thrown with what was wrong, for the caller to wrap in its 502 (it knows the provider and the job). */
export class SamplerResultError extends Error {}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function own(record: Record<string, unknown>, key: string): unknown {
  return Object.hasOwn(record, key) ? record[key] : undefined;
}

/** A provider's value in a message: its JSON text, cut short. */
function excerpt(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 26 ? `${text.slice(0, 25)}…` : text;
}

/**
 * One outcome as the register value: `0x…` hex (Sampler V2 samples and counts) or a bitstring of
 * exactly the register's width (`get_counts()` style, c[n-1] first).
 */
function registerValue(key: string, bits: number): number {
  if (/^0x[0-9a-f]+$/i.test(key)) {
    const value = Number.parseInt(key.slice(2), 16);
    if (!(value < 2 ** bits)) throw new SamplerResultError(`an outcome ${excerpt(key)} wider than the ${bits}-bit register the circuit measures`);
    return value;
  }
  if (/^[01]+$/.test(key)) {
    if (key.length !== bits) throw new SamplerResultError(`a bitstring ${excerpt(key)} of ${key.length} bits where the circuit measures ${bits}`);
    return Number.parseInt(key, 2);
  }
  throw new SamplerResultError(`an outcome ${excerpt(key)} that is neither 0x-hex nor a bitstring`);
}

export function decodeSamplerCounts(body: unknown, expect: SamplerCountsExpectation): DecodedCounts {
  const results = isRecord(body) ? own(body, 'results') : undefined;
  if (!Array.isArray(results)) throw new SamplerResultError('no results array');
  if (results.length !== 1) throw new SamplerResultError(`${results.length} results where one circuit was submitted`);
  const first: unknown = results[0];
  const data = isRecord(first) ? own(first, 'data') : undefined;
  if (!isRecord(data)) throw new SamplerResultError('a result without its data');
  const names = Object.keys(data);
  if (names.length !== 1) throw new SamplerResultError(`${names.length} classical registers (the circuit has one)`);
  const register = data[names[0]!];
  if (!isRecord(register)) throw new SamplerResultError('a register that is not an object');
  const numBits = own(register, 'num_bits');
  if (numBits !== undefined && numBits !== expect.bits) throw new SamplerResultError(`a register of ${JSON.stringify(numBits)} bits where the circuit measures ${expect.bits}`);
  const counts = new Map<number, number>();
  let total = 0;
  const add = (value: number, n: number): void => {
    total += n;
    if (total > expect.shots) throw new SamplerResultError(`more shots than the ${expect.shots} requested`);
    counts.set(value, (counts.get(value) ?? 0) + n);
  };
  const samples = own(register, 'samples');
  const byOutcome = own(register, 'counts');
  if (samples !== undefined) {
    if (!Array.isArray(samples)) throw new SamplerResultError('samples that are not a list');
    for (const sample of samples as unknown[]) {
      if (typeof sample !== 'string') throw new SamplerResultError('a sample that is not a string');
      add(registerValue(sample, expect.bits), 1);
    }
  } else if (byOutcome !== undefined) {
    if (!isRecord(byOutcome)) throw new SamplerResultError('counts that are not an object');
    for (const [key, n] of Object.entries(byOutcome)) {
      if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 0) throw new SamplerResultError(`a count of ${excerpt(n)} for ${excerpt(key)} (counts are whole numbers of shots, 0 or more)`);
      const value = registerValue(key, expect.bits);
      if (n > 0) add(value, n);
    }
  } else {
    throw new SamplerResultError('a register with neither samples nor counts');
  }
  if (total === 0) throw new SamplerResultError('no shots at all');
  return { counts, total };
}
