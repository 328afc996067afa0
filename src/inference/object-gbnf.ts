/**
 * GBNF for a JSON object schema: `properties`, `required`, `additionalProperties`,
 * `patternProperties`, `propertyNames`, `minProperties`/`maxProperties`.
 *
 * The order rule: listed properties are written in the order `properties` declares them (then
 * `required` names that `properties` does not list), each one that is not required may be left
 * out; properties beyond them come last. An object in another order is the same value, so this is
 * a subset of what the schema allows, never more. Properties beyond the listed ones:
 * - with `additionalProperties` (absent means any value, as JSON Schema says; false: none) their
 *   names are any name but the listed ones, written without escapes so none can spell one;
 * - with one `patternProperties` entry whose pattern no listed name matches, names the pattern
 *   matches (regex-to-gbnf.ts), values of its schema; with patternProperties, nothing else is
 *   added (a name outside every pattern cannot be written as a grammar);
 * - a non-trivial `propertyNames` applies to the listed names (checked here) and, when nothing is
 *   listed, gives the added names' grammar.
 * Listed names that a pattern matches get both schemas (allOf). The count of written properties
 * is tracked per position, so `minProperties`/`maxProperties` are exact.
 */
import { z } from 'zod';
import { COLON, gbnfClass, gbnfLiteral } from './gbnf-rules.ts';
import { RegexNotSupportedError, regexToGbnf } from './regex-to-gbnf.ts';
import { countKeyword, isSchemaObject, pointerSegment, type SchemaCompiler, type SchemaObject } from './schema-compiler.ts';

/** Positions × counts: the rules the count tracking may write. */
const MAX_STATES = 4000;

interface Listed { name: string; required: boolean; pair: string | undefined }

function isTrivialNames(names: unknown): boolean {
  return names === undefined || names === true || (isSchemaObject(names) && Object.keys(names).every((k) => (k === 'type' && names.type === 'string') || k === 'description' || k === 'title' || k === '$comment'));
}

/** A quoted key that is none of `names`: raw characters only, walking a trie of the names. */
function keyNotIn(c: SchemaCompiler, names: readonly string[]): string {
  if (names.length === 0) return c.rules.common('string');
  interface Trie { end: boolean; next: Map<number, Trie> }
  const root: Trie = { end: false, next: new Map() };
  for (const name of names) {
    let node = root;
    for (const ch of name) {
      const cp = ch.codePointAt(0)!;
      const child = node.next.get(cp) ?? { end: false, next: new Map() };
      node.next.set(cp, child);
      node = child;
    }
    node.end = true;
  }
  const raw = c.rules.common('raw-char');
  const emit = (node: Trie): string => {
    const parts: string[] = [];
    if (!node.end) parts.push('""');
    const excluded: [number, number][] = [[0x00, 0x1f], [0x22, 0x22], [0x5c, 0x5c], [0x7f, 0x7f], ...[...node.next.keys()].map((cp): [number, number] => [cp, cp])];
    parts.push(`${gbnfClass(excluded, true)} ${raw}*`);
    for (const [cp, child] of node.next) {
      // A character that must be escaped cannot be written raw: no key can follow this edge.
      if (cp < 0x20 || cp === 0x22 || cp === 0x5c || cp === 0x7f) continue;
      parts.push(`${gbnfLiteral(String.fromCodePoint(cp))} ${emit(child)}`);
    }
    return c.rules.add(parts.join(' | '));
  };
  return c.rules.add(`"\\"" ${emit(root)} "\\""`);
}

function patternOf(c: SchemaCompiler, pattern: string, pointer: string): RegExp {
  try {
    return new RegExp(pattern, 'u');
  } catch {
    return c.invalid(pointer, `the pattern ${JSON.stringify(pattern).slice(0, 100)} is not a valid regular expression.`);
  }
}

function namesCheck(c: SchemaCompiler, names: unknown, pointer: string): (name: string) => boolean {
  if (isTrivialNames(names)) return () => true;
  if (names === false) return () => false;
  try {
    const schema = z.fromJSONSchema(names as Parameters<typeof z.fromJSONSchema>[0]);
    return (name) => schema.safeParse(name).success;
  } catch {
    return c.refuse(pointer, 'propertyNames', 'this property-name schema cannot be checked');
  }
}

export function objectGbnf(c: SchemaCompiler, node: SchemaObject, base: string, pointer: string): string | undefined {
  const { rules } = c;
  const ws = rules.common('ws');
  const properties = node.properties ?? {};
  if (!isSchemaObject(properties)) c.invalid(`${pointer}/properties`, "'properties' must be an object.");
  const patterns = node.patternProperties ?? {};
  if (!isSchemaObject(patterns)) c.invalid(`${pointer}/patternProperties`, "'patternProperties' must be an object.");
  const patternList = Object.entries(patterns).map(([p, schema]) => ({ p, re: patternOf(c, p, `${pointer}/patternProperties`), schema }));
  const required = node.required ?? [];
  if (!Array.isArray(required) || !required.every((r) => typeof r === 'string')) c.invalid(`${pointer}/required`, "'required' must be an array of property names.");
  const requiredSet = new Set(required as string[]);
  const additional = Object.hasOwn(node, 'additionalProperties') ? node.additionalProperties : Object.hasOwn(node, 'unevaluatedProperties') ? node.unevaluatedProperties : true;
  const nameOk = namesCheck(c, node.propertyNames, pointer);
  const minP = countKeyword(c, node, 'minProperties', pointer) ?? 0;
  const maxP = countKeyword(c, node, 'maxProperties', pointer);

  const names = [...Object.keys(properties), ...[...requiredSet].filter((r) => !Object.hasOwn(properties, r))];
  const listed: Listed[] = [];
  for (const name of names) {
    const own = Object.hasOwn(properties, name);
    const matching = patternList.filter(({ re }) => re.test(name));
    const parts: unknown[] = [...(own ? [properties[name]] : []), ...matching.map((m) => m.schema)];
    if (!own && matching.length === 0) parts.push(additional);
    const at = own ? `${pointer}/properties/${pointerSegment(name)}` : `${pointer}/required`;
    const schema = parts.length === 1 ? parts[0] : { allOf: parts };
    const value = !nameOk(name) || parts.includes(false) ? undefined : c.compile(schema, base, at);
    const isRequired = requiredSet.has(name);
    if (value === undefined && isRequired) return undefined;
    listed.push({ name, required: isRequired, pair: value === undefined ? undefined : rules.add(`${ws} ${gbnfLiteral(JSON.stringify(name))} ${COLON} ${value}`) });
  }

  // The properties that may follow the listed ones.
  const extras: string[] = [];
  const trivialNames = isTrivialNames(node.propertyNames);
  if (patternList.length === 0 && additional !== false && (trivialNames || names.length === 0)) {
    const value = c.compile(additional, base, `${pointer}/additionalProperties`);
    let key: string | undefined;
    if (trivialNames) key = keyNotIn(c, names);
    else if (node.propertyNames !== false) key = c.compile({ ...(node.propertyNames as SchemaObject), type: 'string' }, base, `${pointer}/propertyNames`);
    if (value !== undefined && key !== undefined) extras.push(`${ws} ${key} ${COLON} ${value}`);
  }
  if (patternList.length === 1 && trivialNames && !names.some((n) => patternList[0]!.re.test(n))) {
    const { p, schema } = patternList[0]!;
    const value = c.compile(schema, base, `${pointer}/patternProperties/${pointerSegment(p)}`);
    let key: string;
    try {
      key = `"\\"" ${regexToGbnf(rules, p)} "\\""`;
    } catch (error) {
      if (!(error instanceof RegexNotSupportedError)) throw error;
      return c.refuse(`${pointer}/patternProperties`, 'patternProperties', `its pattern is outside the supported subset: ${error.message}`);
    }
    if (value !== undefined) extras.push(`${ws} ${key} ${COLON} ${value}`);
  }
  const extra = extras.length === 0 ? undefined : rules.add(extras.join(' | '));

  // Count states: exact up to maxProperties, or saturating at what minProperties needs.
  const top = maxP ?? Math.max(minP, 1);
  if ((listed.length + 1) * (top + 1) > MAX_STATES) c.refuse(pointer, maxP !== undefined ? 'maxProperties' : 'minProperties', 'the count is too large to track in a grammar');
  const sep = '","';
  const memo = new Map<string, string | null>();
  const state = (i: number, count: number): string | undefined => {
    const key = `${i}/${count}`;
    if (memo.has(key)) return memo.get(key) ?? undefined;
    const name = rules.reserve();
    // Set before the body: the saturated tail refers to itself.
    memo.set(key, name);
    const lead = count > 0 ? `${sep} ` : '';
    const next = maxP === undefined ? Math.min(count + 1, top) : count + 1;
    const parts: string[] = [];
    if (i < listed.length) {
      const item = listed[i]!;
      if (item.pair !== undefined && (maxP === undefined || count < maxP)) {
        const rest = state(i + 1, next);
        if (rest !== undefined) parts.push(`${lead}${item.pair} ${rest}`);
      }
      if (!item.required) {
        const rest = state(i + 1, count);
        if (rest !== undefined) parts.push(rest);
      }
    } else {
      if (count >= minP) parts.push('""');
      if (extra !== undefined && (maxP === undefined || count < maxP)) {
        const rest = state(i, next);
        if (rest !== undefined) parts.push(`${lead}${extra} ${rest}`);
      }
    }
    if (parts.length === 0) {
      memo.set(key, null);
      return undefined;
    }
    rules.define(name, parts.join(' | '));
    return name;
  };
  const body = state(0, 0);
  return body === undefined ? undefined : rules.add(`"{" ${body} ${ws} "}"`);
}
