/**
 * Exact GBNF for JSON numbers between bounds (`minimum`, `maximum`, `exclusiveMinimum`,
 * `exclusiveMaximum`), integers or not: the digits are compared with the bounds' decimal digits
 * one place at a time, the way a digit-range regular expression is built, so every number the
 * grammar writes is within the bounds and every number within them of at most 15 integer digits
 * and no exponent can be written. Bounded numbers are written without an exponent.
 */
import { gbnfLiteral, type GbnfRules } from './gbnf-rules.ts';

/** Integer digits a number may have: 15 keep every integer exact in a double. */
export const MAX_INT_DIGITS = 15;

export interface NumberBounds {
  minimum?: number;
  exclusiveMinimum?: boolean;
  maximum?: number;
  exclusiveMaximum?: boolean;
}

/** A non-negative decimal: integer part and fraction digits without trailing zeros. */
interface Decimal { int: bigint; frac: string }
interface Bound { at: Decimal; exclusive: boolean }

/** The exact decimal digits of a finite double's magnitude (String() may use an exponent). */
export function decimalOf(n: number): Decimal {
  const text = Math.abs(n).toString();
  const [mantissa, expText] = text.split('e') as [string, string | undefined];
  const [whole, fraction = ''] = mantissa.split('.') as [string, string | undefined];
  let digits = whole + fraction;
  let point = whole.length + Number(expText ?? 0);
  if (point <= 0) {
    digits = '0'.repeat(1 - point) + digits;
    point = 1;
  }
  if (point > digits.length) digits += '0'.repeat(point - digits.length);
  return { int: BigInt(digits.slice(0, point)), frac: digits.slice(point).replace(/0+$/, '') };
}

const compareDecimal = (a: Decimal, b: Decimal): number => {
  if (a.int !== b.int) return a.int < b.int ? -1 : 1;
  const len = Math.max(a.frac.length, b.frac.length);
  const fa = a.frac.padEnd(len, '0');
  const fb = b.frac.padEnd(len, '0');
  return fa === fb ? 0 : fa < fb ? -1 : 1;
};

const digitClass = (from: number, to: number): string => (from === to ? `"${from}"` : `[${from}-${to}]`);
const alt = (parts: string[]): string | undefined => (parts.length === 0 ? undefined : parts.length === 1 ? parts[0] : `(${parts.join(' | ')})`);

/** Digit strings of equal length from lo to hi (lo ≤ hi), leading zeros allowed. */
function sameLength(lo: string, hi: string): string {
  if (lo.length === 0) return '""';
  if (lo === hi) return `"${lo}"`;
  const a = Number(lo[0]);
  const b = Number(hi[0]);
  const restLo = lo.slice(1);
  const restHi = hi.slice(1);
  const n = restLo.length;
  if (a === b) return `"${a}" ${sameLength(restLo, restHi)}`;
  const any = n === 0 ? '' : ` [0-9]{${n}}`;
  const parts: string[] = [];
  const fromAll = /^0*$/.test(restLo);
  const toAll = /^9*$/.test(restHi);
  const midFrom = fromAll ? a : a + 1;
  const midTo = toAll ? b : b - 1;
  if (!fromAll) parts.push(`"${a}" ${sameLength(restLo, '9'.repeat(n))}`);
  if (midFrom <= midTo) parts.push(`${digitClass(midFrom, midTo)}${any}`);
  if (!toAll) parts.push(`"${b}" ${sameLength('0'.repeat(n), restHi)}`);
  return alt(parts)!;
}

/** Integers from lo to hi (hi undefined: up to MAX_INT_DIGITS digits), no leading zeros. */
function integerRange(lo: bigint, hi: bigint | undefined): string | undefined {
  const top = 10n ** BigInt(MAX_INT_DIGITS) - 1n;
  const upper = hi === undefined || hi > top ? top : hi;
  if (lo < 0n) lo = 0n;
  if (lo > upper) return undefined;
  const parts: string[] = [];
  for (let len = lo.toString().length; len <= upper.toString().length; len++) {
    const first = len === 1 ? 0n : 10n ** BigInt(len - 1);
    const last = 10n ** BigInt(len) - 1n;
    const from = lo > first ? lo : first;
    const to = upper < last ? upper : last;
    if (from > to) continue;
    if (from === first && to === last && len > 1) parts.push(`[1-9] [0-9]{${len - 1}}`);
    else parts.push(sameLength(from.toString(), to.toString()));
  }
  return alt(parts);
}

/**
 * Fraction digits f (possibly none) with lo ≤ 0.f ≤ hi: lo/hi are the bounds' remaining digits,
 * undefined for no bound. `positive`: lo is 0 exclusive, so some digit must be non-zero.
 */
function fraction(rules: GbnfRules, lo: string | undefined, loExclusive: boolean, hi: string | undefined, hiExclusive: boolean, allowEmpty: boolean): string | undefined {
  if (lo === '' && !loExclusive) lo = undefined;
  if (hi === '') {
    // Nothing above 0.000… : only zeros, and only if the bound is inclusive and nothing is required above 0.
    if (hiExclusive || lo !== undefined) return undefined;
    return allowEmpty ? '"0"{0,15}' : '"0"{1,15}';
  }
  // Free digits are bounded like unbounded numbers' (15): fewer digits, a subset, never more.
  if (lo === undefined && hi === undefined) return allowEmpty ? '[0-9]{0,15}' : '[0-9]{1,15}';
  if (lo === '' && hi === undefined) return rules.add('"0"{0,15} [1-9] [0-9]{0,15}');
  const parts: string[] = [];
  // No more digits means 0.000…: within the bounds only if lo allows 0 (hi is above 0 here).
  if (allowEmpty && lo === undefined) parts.push('""');
  // Digits grouped by the bounds that remain after them.
  const groups = new Map<string, { digits: number[]; lo: string | undefined; hi: string | undefined }>();
  for (let d = 0; d <= 9; d++) {
    let nextLo: string | undefined;
    if (lo === undefined) nextLo = undefined;
    else if (lo === '') nextLo = d === 0 ? '' : undefined;
    else {
      const l = Number(lo[0]);
      if (d < l) continue;
      nextLo = d === l ? lo.slice(1) : undefined;
    }
    let nextHi: string | undefined;
    if (hi === undefined) nextHi = undefined;
    else {
      const h = Number(hi[0]);
      if (d > h) continue;
      nextHi = d === h ? hi.slice(1) : undefined;
    }
    const key = `${nextLo ?? '-'}|${nextHi ?? '-'}`;
    const group = groups.get(key) ?? { digits: [], lo: nextLo, hi: nextHi };
    group.digits.push(d);
    groups.set(key, group);
  }
  for (const group of groups.values()) {
    const rest = fraction(rules, group.lo, loExclusive, group.hi, hiExclusive, true);
    if (rest === undefined) continue;
    const ds = group.digits;
    const cls = ds.length === ds.at(-1)! - ds[0]! + 1 ? digitClass(ds[0]!, ds.at(-1)!) : `[${ds.join('')}]`;
    parts.push(rest === '""' ? cls : `${cls} ${rest}`);
  }
  return parts.length === 0 ? undefined : rules.add(parts.join(' | '));
}

/** `.digits` or nothing, for a fraction within the bounds. */
function fractionPart(rules: GbnfRules, lo: Bound | undefined, hi: Bound | undefined): string | undefined {
  const loFrac = lo?.at.frac;
  const hiFrac = hi?.at.frac;
  const parts: string[] = [];
  const zeroOk = (loFrac === undefined || (loFrac === '' && !lo!.exclusive)) && (hiFrac === undefined || hiFrac !== '' || !hi!.exclusive);
  if (zeroOk) parts.push('""');
  const digits = fraction(rules, loFrac, lo?.exclusive ?? false, hiFrac, hi?.exclusive ?? false, false);
  if (digits !== undefined) parts.push(`"." ${digits}`);
  return alt(parts);
}

/** Magnitudes (no sign) from lo to hi, with fractions unless `integer`. */
function magnitudes(rules: GbnfRules, lo: Bound, hi: Bound | undefined, integer: boolean): string | undefined {
  if (hi !== undefined) {
    const order = compareDecimal(lo.at, hi.at);
    if (order > 0 || (order === 0 && (lo.exclusive || hi.exclusive))) return undefined;
  }
  if (integer) {
    let from = lo.at.int;
    if (lo.at.frac !== '' || lo.exclusive) from += 1n;
    let to = hi?.at.int;
    if (hi !== undefined && hi.at.frac === '' && hi.exclusive) to = hi.at.int - 1n;
    if (to !== undefined && to < from) return undefined;
    return integerRange(from, to);
  }
  const anyFraction = '("." [0-9]{1,15})?';
  const parts: string[] = [];
  const push = (int: string | undefined, frac: string | undefined): void => {
    if (int !== undefined && frac !== undefined) parts.push(frac === '""' ? int : `${int} ${frac}`);
  };
  if (hi !== undefined && lo.at.int === hi.at.int) {
    push(integerRange(lo.at.int, lo.at.int), fractionPart(rules, lo, hi));
    return alt(parts);
  }
  push(integerRange(lo.at.int, lo.at.int), fractionPart(rules, lo, undefined));
  const middleTo = hi === undefined ? undefined : hi.at.int - 1n;
  if (middleTo === undefined || middleTo >= lo.at.int + 1n) push(integerRange(lo.at.int + 1n, middleTo), anyFraction);
  if (hi !== undefined) push(integerRange(hi.at.int, hi.at.int), fractionPart(rules, undefined, hi));
  return alt(parts);
}

/**
 * A rule for the JSON numbers (integers when `integer`) within the bounds, or undefined when
 * none can be written (empty range, or bounds beyond MAX_INT_DIGITS digits).
 */
export function numberRangeGbnf(rules: GbnfRules, bounds: NumberBounds, integer: boolean): string | undefined {
  const { minimum, maximum } = bounds;
  const parts: string[] = [];
  const zero: Bound = { at: { int: 0n, frac: '' }, exclusive: false };
  // Non-negative numbers: from max(minimum, 0) up to maximum.
  if (maximum === undefined || maximum > 0 || (maximum === 0 && bounds.exclusiveMaximum !== true)) {
    const lo: Bound = minimum !== undefined && minimum >= 0 ? { at: decimalOf(minimum), exclusive: bounds.exclusiveMinimum === true } : zero;
    const hi: Bound | undefined = maximum === undefined ? undefined : { at: decimalOf(maximum), exclusive: bounds.exclusiveMaximum === true };
    const m = magnitudes(rules, lo, hi, integer);
    if (m !== undefined) parts.push(m);
  }
  // Negative numbers: "-" and a magnitude from max(−maximum, 0) up to −minimum.
  if (minimum === undefined || minimum < 0) {
    const lo: Bound = maximum !== undefined && maximum < 0
      ? { at: decimalOf(maximum), exclusive: bounds.exclusiveMaximum === true }
      : { at: { int: 0n, frac: '' }, exclusive: true };
    const hi: Bound | undefined = minimum === undefined ? undefined : { at: decimalOf(minimum), exclusive: bounds.exclusiveMinimum === true };
    const m = magnitudes(rules, lo, hi, integer);
    if (m !== undefined) parts.push(`${gbnfLiteral('-')} ${m}`);
  }
  return parts.length === 0 ? undefined : rules.add(parts.join(' | '));
}
