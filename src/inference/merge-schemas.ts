/**
 * Two schema objects → one schema that allows exactly the values both allow (an `allOf` of
 * two, or keywords beside `anyOf`/`oneOf`/`$ref` folded into each alternative), for the cases
 * where that is a plain combination of keywords; MergeRefusedError naming the keyword otherwise.
 * Sub-schemas that meet (the same property in both) become an `allOf` of the two, merged in turn
 * when the writer reaches them. Returns false when no value can satisfy both.
 */
import { canonicalJson } from './json-literal-gbnf.ts';
import { isSchemaObject, type SchemaObject } from './schema-compiler.ts';

export class MergeRefusedError extends Error {
  readonly keyword: string;
  constructor(keyword: string) {
    super(`cannot combine two '${keyword}' constraints`);
    this.keyword = keyword;
  }
}

const LOWER = new Set(['minimum', 'exclusiveMinimum', 'minLength', 'minItems', 'minProperties']);
const UPPER = new Set(['maximum', 'exclusiveMaximum', 'maxLength', 'maxItems', 'maxProperties']);
const ANNOTATION = new Set(['title', 'description', '$comment', 'default', 'examples', 'deprecated', 'readOnly', 'writeOnly', '$schema', '$anchor']);
const OBJECT_SHAPE = ['properties', 'patternProperties', 'additionalProperties', 'unevaluatedProperties'];

const both = (x: unknown, y: unknown): unknown => (x === true || x === undefined ? y : y === true || y === undefined ? x : x === false || y === false ? false : { allOf: [x, y] });
const TYPE_SETS = (t: unknown): Set<string> => new Set(Array.isArray(t) ? (t as string[]) : [t as string]);

function mergeTypes(a: unknown, b: unknown): string[] {
  const x = TYPE_SETS(a);
  const y = TYPE_SETS(b);
  const out = new Set<string>();
  for (const t of x) {
    if (y.has(t)) out.add(t);
    else if (t === 'integer' && y.has('number')) out.add('integer');
    else if (t === 'number' && y.has('integer')) out.add('integer');
  }
  return [...out];
}

/** What a side says about a property it does not list: additionalProperties (true when absent). */
const fallbackOf = (s: SchemaObject): unknown => (Object.hasOwn(s, 'additionalProperties') ? s.additionalProperties : true);

function mergeObjects(a: SchemaObject, b: SchemaObject, out: SchemaObject): void {
  const shaped = (s: SchemaObject): boolean => OBJECT_SHAPE.some((k) => Object.hasOwn(s, k));
  if (!shaped(a) || !shaped(b)) return;
  for (const k of ['patternProperties', 'unevaluatedProperties']) if (Object.hasOwn(a, k) || Object.hasOwn(b, k)) throw new MergeRefusedError(k);
  const pa = (a.properties ?? {}) as SchemaObject;
  const pb = (b.properties ?? {}) as SchemaObject;
  const names = [...new Set([...Object.keys(pa), ...Object.keys(pb)])];
  out.properties = Object.fromEntries(names.map((n) => [n, both(Object.hasOwn(pa, n) ? pa[n] : fallbackOf(a), Object.hasOwn(pb, n) ? pb[n] : fallbackOf(b))]));
  const extra = both(fallbackOf(a), fallbackOf(b));
  if (extra === true) delete out.additionalProperties;
  else out.additionalProperties = extra;
}

function mergeArrays(a: SchemaObject, b: SchemaObject, out: SchemaObject): void {
  const has = (s: SchemaObject): boolean => Object.hasOwn(s, 'items') || Object.hasOwn(s, 'prefixItems');
  if (!has(a) || !has(b)) return;
  if (Array.isArray(a.items) || Array.isArray(b.items) || Object.hasOwn(a, 'unevaluatedItems') || Object.hasOwn(b, 'unevaluatedItems')) throw new MergeRefusedError('items');
  const prefA = (a.prefixItems ?? []) as unknown[];
  const prefB = (b.prefixItems ?? []) as unknown[];
  const at = (s: SchemaObject, p: unknown[], i: number): unknown => (i < p.length ? p[i] : Object.hasOwn(s, 'items') ? s.items : true);
  const n = Math.max(prefA.length, prefB.length);
  if (n > 0) out.prefixItems = Array.from({ length: n }, (_, i) => both(at(a, prefA, i), at(b, prefB, i)));
  const rest = both(Object.hasOwn(a, 'items') ? a.items : true, Object.hasOwn(b, 'items') ? b.items : true);
  if (rest === true) delete out.items;
  else out.items = rest;
}

/** The values both `a` and `b` allow, as one schema, or false when there are none. */
export function mergeSchemas(a: SchemaObject, b: SchemaObject): SchemaObject | false {
  // "Unevaluated" depends on which schema evaluated what, which a merge erases.
  for (const k of ['unevaluatedItems', 'unevaluatedProperties']) {
    if (Object.keys(a).length > 0 && (Object.hasOwn(a, k) || Object.hasOwn(b, k))) throw new MergeRefusedError(k);
  }
  const out: SchemaObject = { ...a };
  for (const [k, v] of Object.entries(b)) {
    if (!Object.hasOwn(out, k) || ANNOTATION.has(k)) {
      if (!Object.hasOwn(out, k)) out[k] = v;
      continue;
    }
    const mine = out[k];
    // Each `contains` counts its own matches (minContains/maxContains beside it): never two in one.
    if (k === 'contains') throw new MergeRefusedError(k);
    if (canonicalJson(mine) === canonicalJson(v)) continue;
    if (LOWER.has(k) && typeof mine === 'number' && typeof v === 'number') out[k] = Math.max(mine, v);
    else if (UPPER.has(k) && typeof mine === 'number' && typeof v === 'number') out[k] = Math.min(mine, v);
    else if (k === 'type') {
      const types = mergeTypes(mine, v);
      if (types.length === 0) return false;
      out.type = types.length === 1 ? types[0] : types;
    } else if (k === 'required' && Array.isArray(mine) && Array.isArray(v)) out.required = [...new Set([...mine, ...v])];
    else if (k === 'enum' && Array.isArray(mine) && Array.isArray(v)) {
      const keep = new Set(v.map(canonicalJson));
      out.enum = mine.filter((x) => keep.has(canonicalJson(x)));
      if ((out.enum as unknown[]).length === 0) return false;
    } else if (k === 'const') return false;
    else if (k === 'uniqueItems') out.uniqueItems = mine === true || v === true;
    else if (OBJECT_SHAPE.includes(k) || k === 'items' || k === 'prefixItems') continue;
    else if (k === '$defs' || k === 'definitions') continue;
    else throw new MergeRefusedError(k);
  }
  if (Object.hasOwn(a, 'enum') && Object.hasOwn(b, 'const') && !(a.enum as unknown[]).some((x) => canonicalJson(x) === canonicalJson(b.const))) return false;
  if (Object.hasOwn(b, 'enum') && Object.hasOwn(a, 'const') && !(b.enum as unknown[]).some((x) => canonicalJson(x) === canonicalJson(a.const))) return false;
  mergeObjects(a, b, out);
  mergeArrays(a, b, out);
  if (isSchemaObject(out.properties) && Object.keys(out.properties).length === 0 && !Object.hasOwn(a, 'properties') && !Object.hasOwn(b, 'properties')) delete out.properties;
  return out;
}
