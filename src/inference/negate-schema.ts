/**
 * A schema for "not S", for the writer's `not`, `if`/`else` and `contains` with `maxContains`:
 * a schema whose values S does not allow — all of them where a plain schema can say so, a subset
 * where it cannot (a string other than a given one, a non-integer number), never a value S allows.
 * A subset keeps the writer's rule (every value the grammar lets through is valid), it only
 * writes less. undefined when even a useful subset cannot be written (`pattern`, `$ref`,
 * `oneOf`…): the caller refuses the keyword then.
 *
 * A schema is its type and a conjunction of keywords, each of which constrains only its own kind
 * of value (`minimum` says nothing about strings), so "not S" is the union of "not the type" and,
 * per keyword, the values of its kind that break it (¬minimum 5 is a number below 5).
 */
import { isAnnotation } from './grammar-schema-keywords.ts';
import { isSchemaObject, type SchemaObject } from './schema-compiler.ts';

const KINDS = ['null', 'boolean', 'object', 'array', 'number', 'string'];

const ofType = (type: string, rest: SchemaObject = {}): SchemaObject => ({ type, ...rest });

/** Values of no type in `types` (integer among numbers is left out: "a non-integer" is not written). */
function notTypes(types: unknown): SchemaObject | false | undefined {
  const named = Array.isArray(types) ? types : [types];
  if (named.some((t) => typeof t !== 'string')) return undefined;
  const left = KINDS.filter((k) => !named.includes(k) && !(k === 'number' && named.includes('integer')));
  return left.length === 0 ? false : { type: left.length === 1 ? left[0] : left };
}

/** The kind of a JSON value, as `type` names it. */
const kindOf = (v: unknown): string => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v === 'object' ? 'object' : typeof v);

/** Values equal to none of `values` (JSON Schema equality: 1 and 1.0 are equal). */
function notValues(values: unknown[]): unknown {
  const kinds = new Set(values.map(kindOf));
  const parts: unknown[] = [];
  const others = KINDS.filter((k) => !kinds.has(k));
  if (others.length > 0) parts.push({ type: others.length === 1 ? others[0] : others });
  if (kinds.has('boolean') && !(values.includes(true) && values.includes(false))) parts.push({ const: !values.includes(true) });
  const numbers = [...new Set(values.filter((v): v is number => typeof v === 'number'))].sort((a, b) => a - b);
  // The gaps between the listed numbers; strings, objects and arrays other than listed ones are left out.
  for (let i = 0; i <= numbers.length && numbers.length > 0; i++) {
    parts.push(ofType('number', { ...(i > 0 ? { exclusiveMinimum: numbers[i - 1] } : {}), ...(i < numbers.length ? { exclusiveMaximum: numbers[i] } : {}) }));
  }
  return anyOf(parts);
}

const anyOf = (parts: unknown[]): unknown => {
  const kept = parts.filter((p) => p !== false);
  return kept.length === 0 ? false : kept.length === 1 ? kept[0] : { anyOf: kept };
};

/** Values of the keyword's kind that break `keyword: value`, false when none do, undefined when not written. */
function notKeyword(keyword: string, value: unknown, node: SchemaObject): unknown {
  const count = typeof value === 'number' && Number.isInteger(value) && value >= 0 ? value : undefined;
  const bound = typeof value === 'number' && Number.isFinite(value) ? value : undefined;
  switch (keyword) {
    case 'minimum': return bound === undefined ? undefined : ofType('number', { exclusiveMaximum: bound });
    case 'maximum': return bound === undefined ? undefined : ofType('number', { exclusiveMinimum: bound });
    case 'exclusiveMinimum': return bound === undefined ? undefined : ofType('number', { maximum: bound });
    case 'exclusiveMaximum': return bound === undefined ? undefined : ofType('number', { minimum: bound });
    case 'minLength': return count === undefined ? undefined : count === 0 ? false : ofType('string', { maxLength: count - 1 });
    case 'maxLength': return count === undefined ? undefined : ofType('string', { minLength: count + 1 });
    case 'minItems': return count === undefined ? undefined : count === 0 ? false : ofType('array', { maxItems: count - 1 });
    case 'maxItems': return count === undefined ? undefined : ofType('array', { minItems: count + 1 });
    case 'minProperties': return count === undefined ? undefined : count === 0 ? false : ofType('object', { maxProperties: count - 1 });
    case 'maxProperties': return count === undefined ? undefined : ofType('object', { minProperties: count + 1 });
    case 'required':
      if (!Array.isArray(value) || value.some((n) => typeof n !== 'string')) return undefined;
      return anyOf(value.map((name: string) => ofType('object', { properties: { [name]: false } })));
    case 'properties': {
      if (!isSchemaObject(value)) return undefined;
      const parts: unknown[] = [];
      for (const [name, sub] of Object.entries(value)) {
        const not = negateSchema(sub);
        if (not === undefined) return undefined;
        if (not !== false) parts.push(ofType('object', { required: [name], properties: { [name]: not } }));
      }
      return anyOf(parts);
    }
    case 'items': {
      if (Array.isArray(value) || Object.hasOwn(node, 'prefixItems')) return undefined;
      const not = negateSchema(value);
      return not === undefined ? undefined : not === false ? false : ofType('array', { contains: not });
    }
    case 'contains': {
      // At least minContains items match; its negation, fewer, is written for the default of one.
      if (Object.hasOwn(node, 'maxContains') || (Object.hasOwn(node, 'minContains') && node.minContains !== 1)) return undefined;
      const not = negateSchema(value);
      return not === undefined ? undefined : ofType('array', { items: not });
    }
    // Part of `contains` above (or, without it, ignored by JSON Schema).
    case 'minContains':
    case 'maxContains': return false;
    case 'const': return notValues([value]);
    case 'enum': return Array.isArray(value) ? notValues(value) : undefined;
    case 'not': return value;
    case 'anyOf': {
      if (!Array.isArray(value)) return undefined;
      const nots = value.map(negateSchema);
      if (nots.some((n) => n === undefined)) return undefined;
      return nots.includes(false) ? false : nots.length === 1 ? nots[0] : { allOf: nots };
    }
    case 'allOf': {
      if (!Array.isArray(value)) return undefined;
      const nots = value.map(negateSchema);
      return nots.some((n) => n === undefined) ? undefined : anyOf(nots);
    }
    default: return undefined;
  }
}

/** A schema allowing only values `schema` does not allow (see above), or undefined. */
export function negateSchema(schema: unknown): unknown {
  if (schema === true) return false;
  if (schema === false) return true;
  if (!isSchemaObject(schema)) return undefined;
  // A new base for references inside would be lost when the parts are recombined.
  if (Object.hasOwn(schema, '$id') || Object.hasOwn(schema, '$ref')) return undefined;
  const parts: unknown[] = [];
  for (const [keyword, value] of Object.entries(schema)) {
    if (isAnnotation(keyword)) continue;
    const not = keyword === 'type' ? notTypes(value) : notKeyword(keyword, value, schema);
    if (not === undefined) return undefined;
    parts.push(not);
  }
  return anyOf(parts);
}
