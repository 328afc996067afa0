/**
 * What the JSON-Schema → GBNF writer (schema-gbnf-writer.ts) offers the helpers that write one
 * kind of value (object-gbnf.ts, array-gbnf.ts): a rule for any sub-schema, and the refusals.
 */
import type { GbnfRules } from './gbnf-rules.ts';

export type SchemaObject = Record<string, unknown>;

export interface SchemaCompiler {
  readonly rules: GbnfRules;
  /** A rule for the values `node` allows, or undefined when it allows none. */
  compile(node: unknown, base: string, pointer: string): string | undefined;
  /** A 400 naming the keyword at `pointer` the grammar cannot enforce, and why. */
  refuse(pointer: string, keyword: string, why: string): never;
  /** A 400 for a malformed schema. */
  invalid(pointer: string, message: string): never;
}

export const isSchemaObject = (v: unknown): v is SchemaObject => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A JSON pointer segment for a name (RFC 6901). */
export const pointerSegment = (name: string): string => name.replaceAll('~', '~0').replaceAll('/', '~1');

/** A keyword's non-negative integer value (minItems, maxLength…), or undefined when absent. */
export function countKeyword(compiler: SchemaCompiler, node: SchemaObject, keyword: string, pointer: string): number | undefined {
  if (!Object.hasOwn(node, keyword)) return undefined;
  const value = node[keyword];
  // 2.0 is an integer in JSON Schema.
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) compiler.invalid(`${pointer}/${keyword}`, `'${keyword}' must be a non-negative integer.`);
  return value;
}
