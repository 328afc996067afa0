/**
 * GBNF for a JSON array schema: `prefixItems` (or draft-07 `items: [...]` with
 * `additionalItems`), `items`, `minItems`/`maxItems` exactly, `contains` with
 * `minContains`/`maxContains` (below), and `uniqueItems: true` only where it cannot fail (at most
 * one item). Item counts beyond MAX_COUNT are refused: llama.cpp expands a bounded repetition
 * into one rule per repetition.
 */
import { gbnfRepeat } from './gbnf-rules.ts';
import { negateSchema } from './negate-schema.ts';
import { countKeyword, type SchemaCompiler, type SchemaObject } from './schema-compiler.ts';

const MAX_COUNT = 2000;
/** minContains/maxContains above this are refused (each match is one more rule repetition). */
const MAX_CONTAINS = 64;

export function arrayGbnf(c: SchemaCompiler, node: SchemaObject, base: string, pointer: string): string | undefined {
  const { rules } = c;
  const ws = rules.common('ws');
  let prefix: unknown[];
  let rest: unknown;
  let restAt: string;
  let prefixAt: string;
  if (Array.isArray(node.items)) {
    prefix = node.items;
    prefixAt = 'items';
    rest = Object.hasOwn(node, 'additionalItems') ? node.additionalItems : true;
    restAt = 'additionalItems';
  } else {
    const p = node.prefixItems ?? [];
    if (!Array.isArray(p)) c.invalid(`${pointer}/prefixItems`, "'prefixItems' must be an array of schemas.");
    prefix = p;
    prefixAt = 'prefixItems';
    rest = Object.hasOwn(node, 'items') ? node.items : Object.hasOwn(node, 'unevaluatedItems') ? node.unevaluatedItems : true;
    restAt = Object.hasOwn(node, 'items') ? 'items' : 'unevaluatedItems';
  }
  const min = countKeyword(c, node, 'minItems', pointer) ?? 0;
  let max = countKeyword(c, node, 'maxItems', pointer);
  if (node.uniqueItems !== undefined && typeof node.uniqueItems !== 'boolean') c.invalid(`${pointer}/uniqueItems`, "'uniqueItems' must be a boolean.");
  if (node.uniqueItems === true && (max === undefined || max > 1) && !(prefix.length <= 1 && rest === false)) {
    c.refuse(pointer, 'uniqueItems', 'distinct items cannot be enforced by a grammar (allowed only with maxItems ≤ 1)');
  }
  const lowContains = countKeyword(c, node, 'minContains', pointer) ?? 1;
  if (Object.hasOwn(node, 'contains') && (lowContains > 0 || Object.hasOwn(node, 'maxContains'))) {
    const beside = ['prefixItems', 'minItems', 'maxItems', 'additionalItems', 'unevaluatedItems'].find((k) => Object.hasOwn(node, k)) ?? (Array.isArray(node.items) ? 'items' : undefined);
    if (beside !== undefined) c.refuse(pointer, 'contains', `'contains' together with '${beside}' cannot be enforced`);
    return containsGbnf(c, node, base, pointer, Object.hasOwn(node, 'items') ? node.items : true, lowContains);
  }
  const prefixRules: string[] = [];
  for (const [i, item] of prefix.entries()) {
    const rule = c.compile(item, base, `${pointer}/${prefixAt}/${i}`);
    if (rule === undefined) break;
    prefixRules.push(rule);
  }
  // A position whose schema allows nothing ends the array there.
  if (prefixRules.length < prefix.length) max = Math.min(max ?? Infinity, prefixRules.length);
  const restRule = prefixRules.length < prefix.length ? undefined : c.compile(rest, base, `${pointer}/${restAt}`);
  if (restRule === undefined) max = Math.min(max ?? Infinity, prefixRules.length);
  if (max !== undefined && min > max) return undefined;
  if (min > MAX_COUNT || (max !== undefined && max > MAX_COUNT && max !== Infinity)) {
    c.refuse(pointer, min > MAX_COUNT ? 'minItems' : 'maxItems', `item counts above ${MAX_COUNT} are not enforced by a grammar`);
  }
  const sep = '","';
  const tail = (k: number): string => {
    if (max !== undefined && k >= max) return '""';
    if (k >= prefixRules.length) {
      const item = rules.add(`${ws} ${restRule!}`);
      const more = rules.add(`${sep} ${item}`);
      const rmin = Math.max(0, min - k);
      const rmax = max === undefined ? undefined : max - k;
      if (k > 0) return gbnfRepeat(more, rmin, rmax);
      if (rmin === 0) return `(${item} ${gbnfRepeat(more, 0, rmax === undefined ? undefined : rmax - 1)})?`;
      return `${item} ${gbnfRepeat(more, rmin - 1, rmax === undefined ? undefined : rmax - 1)}`;
    }
    const one = rules.add(`${k > 0 ? `${sep} ` : ''}${ws} ${prefixRules[k]!} ${tail(k + 1)}`);
    return k < min ? one : `${one}?`;
  };
  return rules.add(`"[" ${tail(0)} ${ws} "]"`);
}

/**
 * `contains` C with at least `low` (minContains, 1 by default) and at most maxContains matching
 * items, items all of `items`: N* M (N* M){low-1…} N*, commas between, where M is an item of both
 * `items` and C. Without maxContains N is any item (an M among them is one more match, which is
 * allowed); with it N is an item C does not allow (negate-schema.ts), so the matches are counted
 * exactly, and a C whose negation cannot be written is refused.
 */
function containsGbnf(c: SchemaCompiler, node: SchemaObject, base: string, pointer: string, items: unknown, low: number): string | undefined {
  const { rules } = c;
  const ws = rules.common('ws');
  const high = countKeyword(c, node, 'maxContains', pointer);
  if (Math.max(low, high ?? 0) > MAX_CONTAINS) c.refuse(pointer, high !== undefined && high > MAX_CONTAINS ? 'maxContains' : 'minContains', `counts above ${MAX_CONTAINS} are not enforced by a grammar`);
  if (high !== undefined && high < low) return undefined;
  const match = c.compile({ allOf: [items, node.contains] }, base, `${pointer}/contains`);
  let other: string | undefined;
  if (high === undefined) other = c.compile(items, base, `${pointer}/items`);
  else {
    const not = negateSchema(node.contains);
    if (not === undefined) c.refuse(pointer, 'maxContains', "items that 'contains' does not allow cannot be written as a schema, so matches cannot be counted");
    other = c.compile({ allOf: [items, not] }, base, `${pointer}/contains`);
  }
  const m = match === undefined ? undefined : rules.add(`${ws} ${match}`);
  const n = other === undefined ? undefined : rules.add(`${ws} ${other}`);
  const before = n === undefined ? '' : `(${n} ",")*`;
  const after = n === undefined ? '' : `("," ${n})*`;
  const parts: string[] = [];
  if (m !== undefined && (high === undefined || high >= 1)) {
    const again = rules.add(`${after} "," ${m}`);
    const more = Math.max(low, 1) - 1;
    parts.push(`${before} ${m} ${gbnfRepeat(again, more, high === undefined ? more : high - 1)} ${after}`);
  }
  if (low === 0) parts.push(n === undefined ? '""' : `(${n} ("," ${n})*)?`);
  return parts.length === 0 ? undefined : rules.add(`"[" (${parts.join(' | ')}) ${ws} "]"`);
}
