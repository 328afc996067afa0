/**
 * A JSON Schema `pattern` (an ECMA-262 regular expression, unicode mode) → GBNF for the
 * characters of a JSON string (between its quotes) whose decoded text the expression matches.
 *
 * The subset: literal characters and escapes (\d \w \s and their negations, \n \t \xHH \uHHHH
 * \u{…}, escaped syntax characters), classes `[…]`/`[^…]` with ranges, `.`, groups `(…)`,
 * `(?:…)`, `(?<name>…)`, alternation, quantifiers `* + ? {n} {n,} {n,m}` (lazy or not: the same
 * language), and `^`/`$` only at the start/end of a top-level alternative. A pattern matches
 * anywhere in the string (JSON Schema does not anchor it), so an alternative without `^` may be
 * preceded by any characters and one without `$` followed by any. Everything else (lookaround,
 * backreferences, \b, \p{…}, flags) is refused with RegexNotSupportedError, never approximated.
 *
 * Characters that JSON must escape (`"`, `\`, control characters) are written in their escaped
 * form; every other character is written as itself (never as a \u escape), which is one of the
 * ways to write the same string — a subset, so still correct.
 */
import { gbnfClass, gbnfLiteral, gbnfRepeat, type GbnfRules } from './gbnf-rules.ts';

export class RegexNotSupportedError extends Error {}

/** Larger repetition counts expand into too many llama.cpp grammar rules. */
const MAX_REPEAT = 256;
const MAX_CP = 0x10ffff;

type Ranges = [number, number][];
type Node =
  | { kind: 'alt'; branches: Node[] }
  | { kind: 'seq'; items: Node[] }
  | { kind: 'set'; ranges: Ranges }
  | { kind: 'repeat'; node: Node; min: number; max: number | undefined };

function normalize(ranges: Ranges): Ranges {
  const sorted = ranges.map(([a, b]) => [a, b] as [number, number]).sort((x, y) => x[0] - y[0]);
  const out: Ranges = [];
  for (const [a, b] of sorted) {
    const last = out.at(-1);
    if (last !== undefined && a <= last[1] + 1) last[1] = Math.max(last[1], b);
    else out.push([a, b]);
  }
  return out;
}

function complement(ranges: Ranges): Ranges {
  const out: Ranges = [];
  let next = 0;
  for (const [a, b] of normalize(ranges)) {
    if (a > next) out.push([next, a - 1]);
    next = b + 1;
  }
  if (next <= MAX_CP) out.push([next, MAX_CP]);
  return out;
}

const DIGIT: Ranges = [[0x30, 0x39]];
const WORD: Ranges = [[0x30, 0x39], [0x41, 0x5a], [0x5f, 0x5f], [0x61, 0x7a]];
// ECMA-262 WhiteSpace and LineTerminator.
const SPACE: Ranges = [[0x09, 0x0d], [0x20, 0x20], [0xa0, 0xa0], [0x1680, 0x1680], [0x2000, 0x200a], [0x2028, 0x2029], [0x202f, 0x202f], [0x205f, 0x205f], [0x3000, 0x3000], [0xfeff, 0xfeff]];
const LINE_TERMINATORS: Ranges = [[0x0a, 0x0a], [0x0d, 0x0d], [0x2028, 0x2029]];
const SIMPLE_ESCAPES = new Map<string, number>([['n', 0x0a], ['r', 0x0d], ['t', 0x09], ['v', 0x0b], ['f', 0x0c], ['0', 0x00]]);
const CLASS_ESCAPES = new Map<string, Ranges>([['d', DIGIT], ['w', WORD], ['s', SPACE], ['D', complement(DIGIT)], ['W', complement(WORD)], ['S', complement(SPACE)]]);
const SYNTAX = new Set('^$\\.*+?()[]{}|/-');

class Parser {
  readonly #cps: number[];
  #i = 0;
  readonly source: string;
  constructor(source: string) {
    this.source = source;
    this.#cps = [...source].map((c) => c.codePointAt(0)!);
  }
  #peek(): string | undefined {
    const cp = this.#cps[this.#i];
    return cp === undefined ? undefined : String.fromCodePoint(cp);
  }
  #fail(what: string): never {
    throw new RegexNotSupportedError(`${what} (at character ${this.#i + 1} of the pattern)`);
  }

  /** The top level: alternatives, each with its anchors. */
  top(): { node: Node; start: boolean; end: boolean }[] {
    const out: { node: Node; start: boolean; end: boolean }[] = [];
    for (;;) {
      const start = this.#peek() === '^';
      if (start) this.#i++;
      const node = this.#sequence(true);
      const end = this.#peek() === '$';
      if (end) this.#i++;
      out.push({ node, start, end });
      if (this.#peek() === '|') {
        this.#i++;
        continue;
      }
      if (this.#i < this.#cps.length) this.#fail(`'${this.#peek()}' is not supported here`);
      return out;
    }
  }

  #alternation(): Node {
    const branches = [this.#sequence(false)];
    while (this.#peek() === '|') {
      this.#i++;
      branches.push(this.#sequence(false));
    }
    return branches.length === 1 ? branches[0]! : { kind: 'alt', branches };
  }

  #sequence(top: boolean): Node {
    const items: Node[] = [];
    for (;;) {
      const c = this.#peek();
      if (c === undefined || c === '|' || c === ')') break;
      if (c === '$' && top && (this.#i + 1 === this.#cps.length || this.#cps[this.#i + 1] === 0x7c)) break;
      if (c === '^' || c === '$') this.#fail('an anchor inside the pattern is not supported (only ^ at the start and $ at the end)');
      items.push(this.#quantified(this.#atom()));
    }
    return { kind: 'seq', items };
  }

  #number(): number | undefined {
    let text = '';
    while (/^[0-9]$/.test(this.#peek() ?? '')) text += String.fromCodePoint(this.#cps[this.#i++]!);
    return text === '' ? undefined : Number(text);
  }

  #quantified(node: Node): Node {
    const c = this.#peek();
    let min: number;
    let max: number | undefined;
    if (c === '*') [min, max] = [0, undefined];
    else if (c === '+') [min, max] = [1, undefined];
    else if (c === '?') [min, max] = [0, 1];
    else if (c === '{') {
      this.#i++;
      const lo = this.#number();
      if (lo === undefined) this.#fail("a '{' that is not a quantifier is not supported");
      min = lo;
      max = lo;
      if (this.#peek() === ',') {
        this.#i++;
        max = this.#number();
      }
      if (this.#peek() !== '}') this.#fail("an unclosed '{' quantifier");
      if (min > MAX_REPEAT || (max !== undefined && max > MAX_REPEAT)) this.#fail(`repetition counts above ${MAX_REPEAT} are not supported`);
      if (max !== undefined && max < min) this.#fail('a quantifier whose maximum is below its minimum');
    } else return node;
    this.#i++;
    if (this.#peek() === '?') this.#i++;
    if ('*+?{'.includes(this.#peek() ?? '-')) this.#fail('a quantifier after a quantifier');
    return { kind: 'repeat', node, min, max };
  }

  #atom(): Node {
    const c = this.#peek()!;
    this.#i++;
    if (c === '(') {
      if (this.#peek() === '?') {
        this.#i++;
        const kind = this.#peek();
        if (kind === ':') this.#i++;
        else if (kind === '<' && this.#cps[this.#i + 1] !== 0x3d && this.#cps[this.#i + 1] !== 0x21) {
          while (this.#peek() !== '>' && this.#peek() !== undefined) this.#i++;
          this.#i++;
        } else this.#fail('lookaround and other group modifiers are not supported');
      }
      const inner = this.#alternation();
      if (this.#peek() !== ')') this.#fail("an unclosed '('");
      this.#i++;
      return inner;
    }
    if (c === '[') return { kind: 'set', ranges: this.#class() };
    if (c === '.') return { kind: 'set', ranges: complement(LINE_TERMINATORS) };
    if (c === '\\') return { kind: 'set', ranges: this.#escape(false) };
    if (c === '*' || c === '+' || c === '?' || c === '{' || c === '}' || c === ']' || c === ')') this.#fail(`a bare '${c}' is not supported`);
    const cp = c.codePointAt(0)!;
    return { kind: 'set', ranges: [[cp, cp]] };
  }

  #escape(inClass: boolean): Ranges {
    const c = this.#peek();
    if (c === undefined) this.#fail('a pattern ending in a backslash');
    this.#i++;
    const cls = CLASS_ESCAPES.get(c);
    if (cls !== undefined) return cls;
    const simple = SIMPLE_ESCAPES.get(c);
    if (simple !== undefined && !(c === '0' && /[0-9]/.test(this.#peek() ?? ''))) return [[simple, simple]];
    if (c === 'x' || c === 'u') {
      let hex: string;
      if (c === 'u' && this.#peek() === '{') {
        let j = this.#i + 1;
        hex = '';
        while (this.#cps[j] !== undefined && this.#cps[j] !== 0x7d) hex += String.fromCodePoint(this.#cps[j++]!);
        if (this.#cps[j] !== 0x7d || !/^[0-9a-fA-F]{1,6}$/.test(hex)) this.#fail('a malformed \\u{…} escape');
        this.#i = j + 1;
      } else {
        const n = c === 'x' ? 2 : 4;
        hex = this.#cps.slice(this.#i, this.#i + n).map((x) => String.fromCodePoint(x)).join('');
        if (!new RegExp(`^[0-9a-fA-F]{${n}}$`).test(hex)) this.#fail(`a malformed \\${c} escape`);
        this.#i += n;
      }
      const cp = Number.parseInt(hex, 16);
      if (cp > MAX_CP || (cp >= 0xd800 && cp <= 0xdfff)) this.#fail('an escape of a surrogate or beyond Unicode');
      return [[cp, cp]];
    }
    if (SYNTAX.has(c) || (inClass && c === '-')) {
      const cp = c.codePointAt(0)!;
      return [[cp, cp]];
    }
    return this.#fail(`the escape \\${c} is not supported`);
  }

  #class(): Ranges {
    let negated = false;
    if (this.#peek() === '^') {
      negated = true;
      this.#i++;
    }
    const ranges: Ranges = [];
    let first = true;
    for (;;) {
      const c = this.#peek();
      if (c === undefined) this.#fail("an unclosed '['");
      if (c === ']' && !first) break;
      if (c === ']') this.#fail("an empty class '[]' is not supported");
      first = false;
      const from = this.#classAtom();
      if (this.#peek() === '-' && this.#cps[this.#i + 1] !== 0x5d && this.#cps[this.#i + 1] !== undefined) {
        this.#i++;
        const to = this.#classAtom();
        if (from.length !== 1 || to.length !== 1 || from[0]![0] !== from[0]![1] || to[0]![0] !== to[0]![1]) this.#fail('a range between classes');
        if (to[0]![0] < from[0]![0]) this.#fail('a range out of order');
        ranges.push([from[0]![0], to[0]![0]]);
      } else ranges.push(...from);
    }
    this.#i++;
    return negated ? complement(ranges) : normalize(ranges);
  }

  #classAtom(): Ranges {
    const c = this.#peek()!;
    this.#i++;
    if (c === '\\') {
      if (this.#peek() === 'b') {
        this.#i++;
        return [[0x08, 0x08]];
      }
      return this.#escape(true);
    }
    if (c === '[') this.#fail("a nested '[' is not supported");
    const cp = c.codePointAt(0)!;
    return [[cp, cp]];
  }
}

/** Characters JSON text must escape, and how: `"`, `\`, control characters (and DEL, as node-llama-cpp's). */
function jsonEscape(cp: number): string {
  if (cp === 0x22) return '\\"';
  if (cp === 0x5c) return '\\\\';
  const named = new Map([[0x08, '\\b'], [0x0c, '\\f'], [0x0a, '\\n'], [0x0d, '\\r'], [0x09, '\\t']]).get(cp);
  return named ?? `\\u${cp.toString(16).padStart(4, '0')}`;
}
const needsEscape = (cp: number): boolean => cp < 0x20 || cp === 0x22 || cp === 0x5c || cp === 0x7f;

/** GBNF for one character from a set of code points, written as JSON string content. */
function emitSet(ranges: Ranges): string {
  // Surrogate code points are not characters of a valid string.
  const usable = normalize(ranges).flatMap(([a, b]): Ranges => {
    const out: Ranges = [];
    if (a < 0xd800) out.push([a, Math.min(b, 0xd7ff)]);
    if (b > 0xdfff) out.push([Math.max(a, 0xe000), b]);
    return out;
  });
  const raw: Ranges = [];
  const escaped: string[] = [];
  for (const [a, b] of usable) {
    let start = a;
    for (let cp = a; cp <= Math.min(b, 0x7f); cp++) {
      if (needsEscape(cp)) {
        if (cp > start) raw.push([start, cp - 1]);
        escaped.push(gbnfLiteral(jsonEscape(cp)));
        start = cp + 1;
      }
    }
    if (start <= b) raw.push([start, b]);
  }
  const parts = [...(raw.length > 0 ? [raw.length === 1 && raw[0]![0] === raw[0]![1] ? gbnfLiteral(String.fromCodePoint(raw[0]![0])) : gbnfClass(raw)] : []), ...escaped];
  if (parts.length === 0) throw new RegexNotSupportedError('a class that matches no character');
  return parts.length === 1 ? parts[0]! : `(${parts.join(' | ')})`;
}

function emit(rules: GbnfRules, node: Node): string {
  switch (node.kind) {
    case 'set': return emitSet(node.ranges);
    case 'seq': return node.items.length === 0 ? '""' : node.items.length === 1 ? emit(rules, node.items[0]!) : `(${node.items.map((n) => emit(rules, n)).join(' ')})`;
    case 'alt': return rules.add(node.branches.map((b) => emit(rules, b)).join(' | '));
    case 'repeat': {
      const inner = emit(rules, node.node);
      // A repeated group gets a rule of its own: llama.cpp repeats a name, not a long expression.
      const item = /^[\w-]+$/.test(inner) || /^"[^"]*"$/.test(inner) || /^\[[^\]]*\]$/.test(inner) ? inner : rules.add(inner);
      return gbnfRepeat(item, node.min, node.max);
    }
  }
}

/**
 * A rule for the content of a JSON string (without its quotes) that `pattern` matches, or
 * RegexNotSupportedError saying which part of the pattern is outside the subset.
 */
export function regexToGbnf(rules: GbnfRules, pattern: string): string {
  const branches = new Parser(pattern).top();
  const anyChars = `${rules.common('char')}*`;
  return rules.add(branches.map(({ node, start, end }) => [start ? '' : anyChars, emit(rules, node), end ? '' : anyChars].filter((s) => s !== '' && s !== '""').join(' ') || '""').join(' | '));
}
