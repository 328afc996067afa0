/**
 * A GBNF grammar under construction (llama.cpp's grammar format): named rules, identical bodies
 * shared, names reserved ahead for recursion, and the building blocks every JSON grammar uses.
 * Used by the schema writer (schema-gbnf-writer.ts) and its helpers.
 */

/** Past this many rules a schema is refused: llama.cpp parses the grammar on the event loop. */
const MAX_RULES = 20_000;

/** Thrown when a grammar would grow past MAX_RULES; the writer turns it into a 400. */
export class GrammarTooLargeError extends Error {}

function escapeCodePoint(cp: number, inClass: boolean): string {
  const ch = String.fromCodePoint(cp);
  if (ch === '"' && !inClass) return '\\"';
  if (ch === '\\') return '\\\\';
  if (inClass && (ch === ']' || ch === '[' || ch === '-' || ch === '^')) return `\\x${cp.toString(16).padStart(2, '0')}`;
  if (cp === 0x0a) return '\\n';
  if (cp === 0x0d) return '\\r';
  if (cp === 0x09) return '\\t';
  if (cp < 0x20 || cp === 0x7f) return `\\x${cp.toString(16).padStart(2, '0')}`;
  // Lone surrogates and the line separators would make the grammar text itself awkward to read back.
  if ((cp >= 0xd800 && cp <= 0xdfff) || cp === 0x2028 || cp === 0x2029) return `\\u${cp.toString(16).padStart(4, '0')}`;
  return ch;
}

/** A GBNF string literal matching `text` exactly (code point by code point). */
export function gbnfLiteral(text: string): string {
  let out = '"';
  for (const ch of text) out += escapeCodePoint(ch.codePointAt(0)!, false);
  return `${out}"`;
}

/** A GBNF character class from code point ranges (inclusive), negated or not. */
export function gbnfClass(ranges: readonly (readonly [number, number])[], negated = false): string {
  const parts = ranges.map(([a, b]) => (a === b ? escapeCodePoint(a, true) : `${escapeCodePoint(a, true)}-${escapeCodePoint(b, true)}`));
  return `[${negated ? '^' : ''}${parts.join('')}]`;
}

/** `item{min,max}` (max undefined: no upper bound), written compactly. */
export function gbnfRepeat(item: string, min: number, max: number | undefined): string {
  if (max !== undefined && max === 0) return '""';
  if (min === 0 && max === undefined) return `${item}*`;
  if (min === 1 && max === undefined) return `${item}+`;
  if (min === 0 && max === 1) return `${item}?`;
  if (min === 1 && max === 1) return item;
  if (max === undefined) return `${item}{${min},}`;
  return min === max ? `${item}{${min}}` : `${item}{${min},${max}}`;
}

/**
 * Whitespace between JSON tokens: nothing, one space, or one newline with no indent or an indent
 * of two or four spaces or a tab. Kept narrow: a model choosing among many whitespace tokens
 * writes long runs of them (the random-weights fixture does). Never two newlines in a row, so the
 * end-of-value stop text (four newlines, END_OF_VALUE) cannot appear inside a value.
 */
export const WS_BODY = '[ ]? | "\\n" ("  " | "    " | "\\t")?';

/** Between a key and its value: `:` and at most one space, as JSON.stringify and json.dumps write it. */
export const COLON = '":" [ ]?';

/** What the root ends with: the stop text generation ends on (see response-format-grammar.ts). */
export const END_OF_VALUE = '"\\n\\n\\n\\n" [\\n]*';

/** One character of a JSON string as written: a raw character or an escape (not a lone surrogate). */
export const STRING_CHAR_BODY = '[^"\\\\\\x7F\\x00-\\x1F] | "\\\\" ["\\\\/bfnrt] | "\\\\u" ([0-9a-cA-Ce-fE-F] [0-9a-fA-F]{3} | [dD] [0-7] [0-9a-fA-F]{2})';

/** The building blocks, defined on first use. */
const COMMON = new Map<string, string>([
  ['ws', WS_BODY],
  ['char', STRING_CHAR_BODY],
  // A character written as itself, no escape: keys that must differ from listed names use these.
  ['raw-char', '[^"\\\\\\x7F\\x00-\\x1F]'],
  ['string', '"\\"" char* "\\""'],
  // At most 15 digits: every such integer is exact in a double (2^53 − 1 has 16).
  ['int', '"-"? ("0" | [1-9] [0-9]{0,14})'],
  // At most 15 fraction digits (a double holds no more; a model choosing digits at random would
  // otherwise write them without end), an exponent of at most two: 1e999 would parse to Infinity.
  ['number', 'int ("." [0-9]{1,15})? ([eE] [-+]? [0-9]{1,2})?'],
  ['boolean', '"true" | "false"'],
  ['null', '"null"'],
  ['value', 'object | array | string | number | boolean | null'],
  // Whitespace goes before each member or item and before the closing bracket, never before a
  // comma: fewer places for a model to pad, and what JSON.stringify and json.dumps write.
  ['member', 'ws string ":" [ ]? value'],
  ['item', 'ws value'],
  ['object', '"{" (member ("," member)*)? ws "}"'],
  ['array', '"[" (item ("," item)*)? ws "]"'],
]);

/** Names of COMMON each one refers to, so defining one defines what it needs. */
const COMMON_NEEDS = new Map<string, string[]>([
  ['string', ['char']], ['number', ['int']], ['member', ['string', 'ws', 'value']], ['item', ['ws', 'value']],
  ['object', ['ws', 'member']], ['array', ['item', 'ws']],
  ['value', ['object', 'array', 'string', 'number', 'boolean', 'null']],
]);

export class GbnfRules {
  readonly #bodies = new Map<string, string>();
  readonly #byBody = new Map<string, string>();
  #next = 0;

  /** A common building block by name (ws, char, raw-char, string, int, number, boolean, null, value). */
  common(name: string): string {
    if (!this.#bodies.has(name)) {
      const body = COMMON.get(name);
      if (body === undefined) throw new Error(`no common rule ${name}`);
      this.#bodies.set(name, body);
      for (const need of COMMON_NEEDS.get(name) ?? []) this.common(need);
    }
    return name;
  }

  /** A rule for `body`; a body written before gets the same rule. */
  add(body: string): string {
    const known = this.#byBody.get(body);
    if (known !== undefined) return known;
    const name = this.reserve();
    this.define(name, body);
    return name;
  }

  /** A fresh rule name, to define later (a rule that refers to itself). */
  reserve(): string {
    if (this.#bodies.size + this.#next > 2 * MAX_RULES) throw new GrammarTooLargeError();
    return `r${this.#next++}`;
  }

  define(name: string, body: string): void {
    if (this.#bodies.size >= MAX_RULES) throw new GrammarTooLargeError();
    this.#bodies.set(name, body);
    if (!this.#byBody.has(body)) this.#byBody.set(body, name);
  }

  /** The grammar text, `root` first. */
  text(rootBody: string): string {
    const lines = [`root ::= ${rootBody}`];
    for (const [name, body] of this.#bodies) lines.push(`${name} ::= ${body}`);
    return `${lines.join('\n')}\n`;
  }
}
