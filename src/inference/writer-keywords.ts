/**
 * The keywords svc's JSON-Schema → GBNF writer (schema-gbnf-writer.ts) takes, and why it refuses
 * the others: annotations (grammar-schema-keywords.ts's list) are accepted and constrain nothing;
 * every other keyword is either written into the grammar or refused, never ignored.
 */
import { isAnnotation } from './grammar-schema-keywords.ts';

/** Keywords that constrain one kind of value, applied by the writer's per-type helpers. */
export const WRITER_TYPE_KEYWORDS: ReadonlySet<string> = new Set([
  'properties', 'required', 'additionalProperties', 'patternProperties', 'propertyNames', 'minProperties', 'maxProperties', 'unevaluatedProperties',
  'items', 'prefixItems', 'additionalItems', 'minItems', 'maxItems', 'uniqueItems', 'unevaluatedItems', 'contains', 'minContains', 'maxContains',
  'minLength', 'maxLength', 'pattern', 'format',
  'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf',
]);

const STRUCTURAL = new Set(['type', 'enum', 'const', '$ref', 'allOf', 'anyOf', 'oneOf', 'not']);
/** Keywords next to which "unevaluated" is not simply "not listed here". */
const APPLICATORS = ['allOf', 'anyOf', 'oneOf', '$ref', 'not', 'if', 'then', 'else', 'dependentSchemas', 'contains'];

/** Written as alternatives (conditional-schemas.ts). */
const CONDITIONAL = new Set(['if', 'then', 'else', 'dependentRequired', 'dependentSchemas', 'dependencies']);

const REFUSED = new Map<string, string>([
  ['$dynamicRef', 'dynamic references are not supported'],
  ['$recursiveRef', 'dynamic references are not supported'],
]);

/** Why the writer does not take `keyword` in `node`, or undefined when it does. */
export function unsupportedWriterKeyword(node: Readonly<Record<string, unknown>>, keyword: string): string | undefined {
  if (STRUCTURAL.has(keyword) || isAnnotation(keyword) || keyword === 'contentSchema') return undefined;
  // Without what they qualify these constrain nothing (JSON Schema 2020-12 says they are ignored).
  if ((keyword === 'then' || keyword === 'else') && !Object.hasOwn(node, 'if')) return undefined;
  if (keyword === 'if' && !Object.hasOwn(node, 'then') && !Object.hasOwn(node, 'else')) return undefined;
  if (CONDITIONAL.has(keyword)) return undefined;
  if (keyword === 'unevaluatedProperties' || keyword === 'unevaluatedItems') {
    const beside = APPLICATORS.find((k) => Object.hasOwn(node, k) && !(k === 'if' && !Object.hasOwn(node, 'then') && !Object.hasOwn(node, 'else')));
    return beside === undefined ? undefined : `unevaluated keywords beside '${beside}' cannot be enforced`;
  }
  if (WRITER_TYPE_KEYWORDS.has(keyword)) return undefined;
  const why = REFUSED.get(keyword);
  if (why !== undefined) return why;
  return "svc does not know it; annotations svc accepts are listed in docs/runtime.md, and vendor extensions start with 'x-'";
}
