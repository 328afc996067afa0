/**
 * GBNF for one JSON value exactly (an `enum` or `const` member): strings and numbers as
 * JSON.stringify writes them, arrays and objects with the whitespace the rest of the grammar
 * allows and object members in the order given (one of the ways to write the same value).
 */
import { COLON, gbnfLiteral, type GbnfRules } from './gbnf-rules.ts';

export function jsonLiteralGbnf(rules: GbnfRules, value: unknown): string {
  if (value === null || typeof value !== 'object') return gbnfLiteral(JSON.stringify(value));
  const ws = rules.common('ws');
  const items = Array.isArray(value)
    ? value.map((v) => `${ws} ${jsonLiteralGbnf(rules, v)}`)
    : Object.entries(value).map(([k, v]) => `${ws} ${gbnfLiteral(JSON.stringify(k))} ${COLON} ${jsonLiteralGbnf(rules, v)}`);
  const [open, close] = Array.isArray(value) ? ['"["', '"]"'] : ['"{"', '"}"'];
  return rules.add(`${open} ${items.join(' "," ')} ${ws} ${close}`.replace(/ {2,}/g, ' '));
}

/** Equality as JSON Schema means it (`enum`, `const`): same JSON value, object keys in any order. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    return `{${Object.keys(value).sort().map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`).join(',')}}`;
  }
  return JSON.stringify(value);
}
