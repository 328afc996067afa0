import type { GbnfJsonSchema } from 'node-llama-cpp';
import { ApiError } from '../shared/api-error.ts';
import { quoteInput } from '../shared/quote-input.ts';
import {
  ARRAY_KEYWORDS,
  constrainingSiblings,
  FORMATS,
  hasAny,
  isAnnotation,
  NUMBER_KEYWORDS,
  OBJECT_KEYWORDS,
  STRING_KEYWORDS,
  TYPES,
  unsupportedReason,
} from './grammar-schema-keywords.ts';
import { resolveJsonPointer } from './resolve-json-pointer.ts';

/**
 * JSON Schema (as OpenAI clients send it) → the subset node-llama-cpp turns into a grammar
 * (`GbnfJsonSchema`), or a 400 naming the keyword that cannot be enforced and where it is.
 *
 * The rule: every value the grammar lets the model write must be valid against the client's
 * schema. So keywords that only annotate (`title`, `description`, `default`, `examples`,
 * `$schema`…) are accepted and dropped; keywords that constrain are either translated into
 * something the grammar enforces, or refused — never silently ignored, or the reply could
 * break the schema the client relies on. Translations (each one yields a subset of what the
 * client's schema allows):
 *
 * - `anyOf` → `oneOf` (the grammar writes one alternative, which satisfies `anyOf`);
 * - `type: [a, b]` → `oneOf` of one schema per type, each with that type's keywords (node-
 *   llama-cpp only applies `properties`, `minLength`… to a single `type`);
 * - no `type` → inferred from the keywords present (`properties` → object…), or any JSON
 *   value when there are none (`{}`, `true`);
 * - any local `$ref` (`#/$defs/x`, `#/definitions/x`, `#`, `#/properties/a`) → a root
 *   `$defs` entry, so recursive schemas work;
 * - draft-07 tuples (`items: [..]`, `additionalItems`) → `prefixItems`;
 * - `additionalProperties` absent → none (JSON Schema would allow any; writing none is valid).
 *
 * node-llama-cpp writes every listed property (it ignores `required`), which satisfies any
 * `required`; a `required` name that `properties` does not define could not be satisfied and
 * is refused.
 */
export type GrammarSchema = GbnfJsonSchema;

/** What a schema that allows any JSON value becomes: one alternative per kind of value. */
const ANY_VALUE: GrammarSchema = {
  oneOf: [
    { type: ['string', 'number', 'boolean', 'null'] },
    { type: 'object', additionalProperties: true },
    { type: 'array' },
  ],
};

type SchemaObject = Record<string, unknown>;

interface Walk {
  root: unknown;
  /** The request field the schema came from (`response_format.json_schema.schema`). */
  param: string;
  /** JSON pointer of each `$ref` target → its name in the root `$defs`. */
  refNames: Map<string, string>;
  defs: Map<string, GrammarSchema | undefined>;
  /**
   * `$defs` names being walked that a reference could reach again before any object or array
   * bracket is written: a reference to one of them is left recursion, which no grammar can write.
   */
  unguarded: Set<string>;
  /** Schemas nested around the one being walked (bounded: the walk recurses). */
  depth: number;
}

/** Deeper than any request body can nest (MAX_JSON_DEPTH); a library caller gets a 400, not a stack overflow. */
const MAX_SCHEMA_DEPTH = 64;

function isObject(value: unknown): value is SchemaObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function refuse(walk: Walk, pointer: string, message: string): never {
  throw ApiError.invalidRequest(`${walk.param} at ${pointer === '' ? 'the root' : pointer}: ${message}`, walk.param, 'unsupported_schema');
}

function refuseKeyword(walk: Walk, pointer: string, keyword: string, why: string): never {
  refuse(walk, pointer, `the keyword '${keyword}' is not supported (${why}). Structured output is enforced by a grammar, so svc refuses what it cannot enforce rather than ignore it.`);
}

function isPrimitive(value: unknown): value is string | number | boolean | null {
  return value === null || typeof value === 'string' || typeof value === 'boolean' || (typeof value === 'number' && Number.isFinite(value));
}

function describe(node: SchemaObject): { description?: string } {
  return typeof node.description === 'string' ? { description: node.description } : {};
}

function nonNegativeInteger(walk: Walk, node: SchemaObject, keyword: string, pointer: string): number | undefined {
  const value = node[keyword];
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) refuse(walk, `${pointer}/${keyword}`, `'${keyword}' must be a non-negative integer, not ${quoteInput(value)}.`);
  return value;
}

function refName(walk: Walk, target: string): string {
  const segments = target.split('/');
  const last = segments.at(-1) ?? '';
  const container = segments.at(-2);
  const taken = new Set(walk.refNames.values());
  // The client's own name where it is plain and not one of Object.prototype's ('constructor').
  const named = (container === '$defs' || container === 'definitions') && /^[A-Za-z0-9_]{1,64}$/.test(last) && !(last in Object.prototype) && !taken.has(last);
  if (named) return last;
  let n = walk.refNames.size;
  while (taken.has(`def${n}`)) n++;
  return `def${n}`;
}

function walkRef(walk: Walk, node: SchemaObject, pointer: string): GrammarSchema {
  const ref = node.$ref;
  if (typeof ref !== 'string') refuse(walk, `${pointer}/$ref`, `'$ref' must be a string, not ${quoteInput(ref)}.`);
  const siblings = constrainingSiblings(node, '$ref');
  if (siblings.length > 0) refuseKeyword(walk, pointer, siblings[0]!, 'keywords beside $ref are not enforced');
  if (!ref.startsWith('#') || (ref.length > 1 && !ref.startsWith('#/'))) {
    refuse(walk, `${pointer}/$ref`, `the reference ${quoteInput(ref)} is not supported: only references inside the schema ('#/$defs/Name', '#/definitions/Name', '#', '#/properties/…') are.`);
  }
  let target: string;
  try {
    target = decodeURIComponent(ref.slice(1));
  } catch {
    refuse(walk, `${pointer}/$ref`, `the reference ${quoteInput(ref)} is not a valid URI fragment.`);
  }
  let name = walk.refNames.get(target);
  if (name !== undefined && walk.unguarded.has(name)) {
    refuse(walk, `${pointer}/$ref`, `the reference ${quoteInput(ref)} leads back to itself before any object or array: a schema that is only itself cannot be written.`);
  }
  if (name === undefined) {
    const resolved = resolveJsonPointer(walk.root, target);
    if (resolved === undefined) refuse(walk, `${pointer}/$ref`, `the reference ${quoteInput(ref)} points to nothing in the schema.`);
    name = refName(walk, target);
    // Registered before walking the target, so a schema that refers to itself terminates.
    walk.refNames.set(target, name);
    walk.defs.set(name, undefined);
    walk.unguarded.add(name);
    walk.defs.set(name, walkSchema(walk, resolved, target));
    walk.unguarded.delete(name);
  }
  return { $ref: `#/$defs/${name}`, ...describe(node) } as GrammarSchema;
}

/** Walks what sits inside an object's or array's brackets: references there are no longer left recursion. */
function insideBrackets<T>(walk: Walk, run: () => T): T {
  const outer = walk.unguarded;
  walk.unguarded = new Set();
  try {
    return run();
  } finally {
    walk.unguarded = outer;
  }
}

function walkObject(walk: Walk, node: SchemaObject, pointer: string): GrammarSchema {
  return insideBrackets(walk, () => walkObjectInside(walk, node, pointer));
}

function walkObjectInside(walk: Walk, node: SchemaObject, pointer: string): GrammarSchema {
  const propertiesNode = node.properties ?? {};
  if (!isObject(propertiesNode)) refuse(walk, `${pointer}/properties`, `'properties' must be an object, not ${quoteInput(propertiesNode)}.`);
  // Keyed by the client's property names: built as own properties (Object.fromEntries), never by assignment.
  const properties = Object.fromEntries(Object.entries(propertiesNode).map(([name, schema]) => {
    const at = `${pointer}/properties/${name.replaceAll('~', '~0').replaceAll('/', '~1')}`;
    // node-llama-cpp writes every property, so one that must be absent cannot be honoured.
    if (schema === false) refuse(walk, at, "a property whose schema is false (must be absent) is not supported: the grammar writes every listed property.");
    return [name, walkSchema(walk, schema, at)];
  })) as Record<string, GrammarSchema>;
  const required = node.required ?? [];
  if (!Array.isArray(required) || !required.every((r) => typeof r === 'string')) refuse(walk, `${pointer}/required`, "'required' must be an array of property names.");
  for (const name of required as string[]) {
    if (!Object.hasOwn(properties, name)) {
      refuse(walk, `${pointer}/required`, `'required' names ${quoteInput(name)}, which 'properties' does not define; the grammar writes exactly the listed properties, so it could not be satisfied.`);
    }
  }
  if (node.propertyNames !== undefined) {
    const names = node.propertyNames;
    // Property names are strings anyway; anything narrower cannot be enforced.
    const trivial = names === true || (isObject(names) && Object.keys(names).every((k) => isAnnotation(k) || (k === 'type' && names.type === 'string')));
    if (!trivial) refuseKeyword(walk, pointer, 'propertyNames', 'property names cannot be constrained');
  }
  let additional: boolean | GrammarSchema = false;
  const additionalNode = node.additionalProperties ?? node.unevaluatedProperties;
  if (node.unevaluatedProperties !== undefined && node.unevaluatedProperties !== false && node.additionalProperties === undefined) {
    refuseKeyword(walk, pointer, 'unevaluatedProperties', 'only unevaluatedProperties: false is supported');
  }
  if (additionalNode === true) additional = true;
  else if (additionalNode !== undefined && additionalNode !== false) additional = walkSchema(walk, additionalNode, `${pointer}/additionalProperties`);
  const minProperties = nonNegativeInteger(walk, node, 'minProperties', pointer);
  const maxProperties = nonNegativeInteger(walk, node, 'maxProperties', pointer);
  // Every listed property is written, and node-llama-cpp counts properties only where extra ones may be added.
  const listed = Object.keys(properties).length;
  if (minProperties !== undefined && minProperties > listed && additional === false) {
    refuseKeyword(walk, pointer, 'minProperties', `the grammar writes exactly the ${listed} listed properties when no additional ones are allowed`);
  }
  if (maxProperties !== undefined && maxProperties < listed) refuseKeyword(walk, pointer, 'maxProperties', `the grammar writes all ${listed} listed properties`);
  return {
    type: 'object',
    properties,
    ...(additional !== false ? { additionalProperties: additional } : {}),
    ...(minProperties !== undefined ? { minProperties } : {}),
    ...(maxProperties !== undefined ? { maxProperties } : {}),
    ...describe(node),
  } as GrammarSchema;
}

function walkArray(walk: Walk, node: SchemaObject, pointer: string): GrammarSchema {
  return insideBrackets(walk, () => walkArrayInside(walk, node, pointer));
}

function walkArrayInside(walk: Walk, node: SchemaObject, pointer: string): GrammarSchema {
  if (node.uniqueItems === true) refuseKeyword(walk, pointer, 'uniqueItems', 'distinct items cannot be enforced');
  let prefix: unknown[] | undefined;
  let rest: unknown;
  let prefixKeyword = 'prefixItems';
  if (Array.isArray(node.items)) {
    // Draft-07 tuples: `items` is the list, `additionalItems` the rest.
    prefix = node.items;
    prefixKeyword = 'items';
    rest = node.additionalItems;
  } else {
    if (node.prefixItems !== undefined && !Array.isArray(node.prefixItems)) refuse(walk, `${pointer}/prefixItems`, "'prefixItems' must be an array of schemas.");
    prefix = node.prefixItems as unknown[] | undefined;
    rest = node.items;
  }
  const prefixItems = prefix?.map((item, i) => walkSchema(walk, item, `${pointer}/${prefixKeyword}/${i}`));
  let maxItems = nonNegativeInteger(walk, node, 'maxItems', pointer);
  const minItems = nonNegativeInteger(walk, node, 'minItems', pointer);
  let items: GrammarSchema | undefined;
  if (rest === false) {
    // No items beyond the prefix (or none at all without one).
    maxItems = Math.min(maxItems ?? Number.POSITIVE_INFINITY, prefixItems?.length ?? 0);
  } else if (rest !== undefined && rest !== true) {
    items = walkSchema(walk, rest, `${pointer}/${Array.isArray(node.items) ? 'additionalItems' : 'items'}`);
  }
  return {
    type: 'array',
    ...(items !== undefined ? { items } : {}),
    ...(prefixItems !== undefined && prefixItems.length > 0 ? { prefixItems } : {}),
    ...(minItems !== undefined ? { minItems } : {}),
    ...(maxItems !== undefined ? { maxItems } : {}),
    ...describe(node),
  } as GrammarSchema;
}

function walkString(walk: Walk, node: SchemaObject, pointer: string): GrammarSchema {
  const minLength = nonNegativeInteger(walk, node, 'minLength', pointer);
  const maxLength = nonNegativeInteger(walk, node, 'maxLength', pointer);
  const format = node.format;
  if (format !== undefined) {
    if (typeof format !== 'string' || !FORMATS.has(format)) {
      refuse(walk, `${pointer}/format`, `the format ${quoteInput(format)} is not supported: the grammar can enforce 'date-time', 'date' and 'time' only.`);
    }
    if (minLength !== undefined || maxLength !== undefined) refuseKeyword(walk, pointer, minLength !== undefined ? 'minLength' : 'maxLength', 'lengths cannot be combined with a format');
    return { type: 'string', format, ...describe(node) } as GrammarSchema;
  }
  return {
    type: 'string',
    ...(minLength !== undefined ? { minLength } : {}),
    ...(maxLength !== undefined ? { maxLength } : {}),
    ...describe(node),
  } as GrammarSchema;
}

/**
 * `minimum`/`maximum` are refused unless they are no bound at all in practice: zod adds
 * ±(2^53 − 1) to every integer, and the grammar writes at most 16 digits, so those bounds
 * are accepted (a 16-digit integer beyond 2^53 is the one value that could slip through).
 */
function checkNumberBounds(walk: Walk, node: SchemaObject, pointer: string): void {
  const min = node.minimum;
  const max = node.maximum;
  if (min !== undefined && !(typeof min === 'number' && min <= -Number.MAX_SAFE_INTEGER)) refuseKeyword(walk, pointer, 'minimum', 'numeric bounds cannot be enforced');
  if (max !== undefined && !(typeof max === 'number' && max >= Number.MAX_SAFE_INTEGER)) refuseKeyword(walk, pointer, 'maximum', 'numeric bounds cannot be enforced');
}

function walkType(walk: Walk, node: SchemaObject, type: string, pointer: string): GrammarSchema {
  switch (type) {
    case 'object': return walkObject(walk, node, pointer);
    case 'array': return walkArray(walk, node, pointer);
    case 'string': return walkString(walk, node, pointer);
    case 'number':
    case 'integer':
      checkNumberBounds(walk, node, pointer);
      return { type, ...describe(node) } as GrammarSchema;
    default: return { type, ...describe(node) } as GrammarSchema;
  }
}

/** The JSON type of a literal, as JSON Schema names it. */
function jsonType(value: string | number | boolean | null): string {
  if (value === null) return 'null';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

function checkLiterals(walk: Walk, node: SchemaObject, values: readonly unknown[], keyword: string, pointer: string): (string | number | boolean | null)[] {
  const types = node.type === undefined ? undefined : new Set(Array.isArray(node.type) ? node.type : [node.type]);
  return values.map((value, i) => {
    const at = keyword === 'enum' ? `${pointer}/enum/${i}` : `${pointer}/const`;
    if (!isPrimitive(value)) refuse(walk, at, `only strings, numbers, booleans and null are supported as '${keyword}' values, not ${quoteInput(value)}.`);
    const type = jsonType(value);
    // The grammar writes the literal whatever `type` says; one of the wrong type would break the schema.
    if (types !== undefined && !types.has(type) && !(type === 'integer' && types.has('number'))) {
      refuse(walk, at, `the ${keyword} value ${quoteInput(value)} is not of the schema's type.`);
    }
    return value;
  });
}

function walkSchema(walk: Walk, node: unknown, pointer: string): GrammarSchema {
  if (walk.depth >= MAX_SCHEMA_DEPTH) refuse(walk, pointer, `the schema nests deeper than ${MAX_SCHEMA_DEPTH} levels.`);
  walk.depth++;
  try {
    return walkSchemaNode(walk, node, pointer);
  } finally {
    walk.depth--;
  }
}

function walkSchemaNode(walk: Walk, node: unknown, pointer: string): GrammarSchema {
  if (node === true) return ANY_VALUE;
  if (node === false) refuse(walk, pointer, 'the schema false matches nothing.');
  if (!isObject(node)) refuse(walk, pointer, `a schema must be an object or a boolean, not ${quoteInput(node)}.`);
  for (const keyword of Object.keys(node)) {
    const why = unsupportedReason(keyword);
    if (why !== undefined) refuseKeyword(walk, pointer, keyword, why);
  }
  // `$id` below the root starts a new base for references, which the walk resolves from the root only.
  if (pointer !== '' && node.$id !== undefined) refuseKeyword(walk, pointer, '$id', 'an $id inside the schema changes what its references mean');
  if (node.$ref !== undefined) return walkRef(walk, node, pointer);
  if (node.allOf !== undefined) {
    // A single-element allOf is how some generators attach a description to a $ref.
    if (!Array.isArray(node.allOf) || node.allOf.length !== 1 || constrainingSiblings(node, 'allOf').length > 0) {
      refuseKeyword(walk, pointer, 'allOf', 'intersections of schemas cannot be enforced');
    }
    const inner = walkSchema(walk, node.allOf[0], `${pointer}/allOf/0`);
    return { ...inner, ...describe(node) } as GrammarSchema;
  }
  for (const keyword of ['anyOf', 'oneOf'] as const) {
    if (node[keyword] === undefined) continue;
    const alternatives = node[keyword];
    if (!Array.isArray(alternatives) || alternatives.length === 0) refuse(walk, `${pointer}/${keyword}`, `'${keyword}' must be a non-empty array of schemas.`);
    const siblings = constrainingSiblings(node, keyword);
    if (siblings.length > 0) refuseKeyword(walk, pointer, siblings[0]!, `keywords beside ${keyword} are not enforced; move them into each alternative`);
    return { oneOf: alternatives.map((alt, i) => walkSchema(walk, alt, `${pointer}/${keyword}/${i}`)), ...describe(node) } as GrammarSchema;
  }
  for (const keyword of ['const', 'enum'] as const) {
    if (node[keyword] === undefined) continue;
    // The grammar writes the literal as given: a sibling that would rule one out (`minLength`…) is not applied.
    const siblings = constrainingSiblings(node, keyword).filter((k) => k !== 'type');
    if (siblings.length > 0) refuseKeyword(walk, pointer, siblings[0]!, `keywords beside ${keyword} are not applied to its values`);
  }
  if (node.const !== undefined) return { const: checkLiterals(walk, node, [node.const], 'const', pointer)[0]!, ...describe(node) } as GrammarSchema;
  if (node.enum !== undefined) {
    if (!Array.isArray(node.enum) || node.enum.length === 0) refuse(walk, `${pointer}/enum`, "'enum' must be a non-empty array.");
    return { enum: checkLiterals(walk, node, node.enum, 'enum', pointer), ...describe(node) } as GrammarSchema;
  }

  let types: string[];
  if (node.type === undefined) {
    // No type: JSON Schema allows any value; writing one of the kinds the keywords describe is valid.
    types = [];
    if (hasAny(node, OBJECT_KEYWORDS)) types.push('object');
    if (hasAny(node, ARRAY_KEYWORDS)) types.push('array');
    if (hasAny(node, STRING_KEYWORDS)) types.push('string');
    if (hasAny(node, NUMBER_KEYWORDS)) types.push('number');
    if (types.length === 0) return typeof node.description === 'string' ? { ...ANY_VALUE, description: node.description } as GrammarSchema : ANY_VALUE;
  } else {
    const raw = Array.isArray(node.type) ? node.type : [node.type];
    if (raw.length === 0) refuse(walk, `${pointer}/type`, "'type' must name at least one type.");
    for (const t of raw) {
      if (typeof t !== 'string' || !TYPES.has(t)) refuse(walk, `${pointer}/type`, `${quoteInput(t)} is not a JSON Schema type.`);
    }
    types = [...new Set(raw as string[])];
  }
  if (types.length === 1) return walkType(walk, node, types[0]!, pointer);
  // node-llama-cpp applies type-specific keywords only to a single type: one alternative per type.
  return { oneOf: types.map((t) => walkType(walk, node, t, pointer)), ...describe(node) } as GrammarSchema;
}

/**
 * The schema as node-llama-cpp's grammar takes it, or a 400 (`unsupported_schema`, `param`
 * naming the field) that says which keyword at which JSON pointer cannot be enforced.
 * `rootObject`: the schema must describe an object (tool parameters, as OpenAI requires).
 */
export function toGrammarSchema(schema: unknown, param: string, options: { rootObject?: boolean } = {}): GrammarSchema {
  const walk: Walk = { root: schema, param, refNames: new Map(), defs: new Map(), unguarded: new Set(), depth: 0 };
  let root = walkSchema(walk, schema, '');
  if (options.rootObject === true && (root as { type?: unknown }).type !== 'object') {
    refuse(walk, '', "the schema must describe an object ('type': 'object'), as OpenAI requires for function parameters.");
  }
  if (walk.defs.size > 0) {
    // Only objects, arrays, oneOf and $ref can hold references, and each takes `$defs`.
    root = { ...root, $defs: Object.fromEntries(walk.defs) } as GrammarSchema;
  }
  return root;
}
