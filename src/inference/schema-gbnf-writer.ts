/**
 * svc's own JSON Schema (2020-12, and the draft-07 spellings clients still send) → GBNF writer,
 * for `response_format` json_schema. The rule, as for the grammar-schema walk: every value the
 * grammar lets the model write is valid against the client's schema, and a keyword the grammar
 * cannot enforce is refused with a 400 naming it and where it is — never ignored. Per keyword:
 * objects (object-gbnf.ts: optional properties, the order rule), arrays (array-gbnf.ts), numbers
 * with exact bounds (number-range-gbnf.ts), `pattern` (regex-to-gbnf.ts), formats
 * (string-format-gbnf.ts), `enum`/`const` of any JSON value, `anyOf`/`oneOf` (one alternative),
 * `allOf` (merge-schemas.ts), `$ref` anywhere inside the schema (schema-resources.ts; recursion is
 * a recursive rule), `not` of types. A schema without `type` allows every kind of value, each with
 * the keywords that apply to it.
 *
 * `oneOf` means "exactly one": the grammar writes one alternative, so alternatives that can both
 * match the same value (not told apart by type or by a `const`/`enum` property) are left to the
 * check after generation (structured-reply-check.ts), as are calendar rules no format here has.
 */
import { ApiError } from '../shared/api-error.ts';
import { quoteInput } from '../shared/quote-input.ts';
import { arrayGbnf } from './array-gbnf.ts';
import { ConditionRefusedError, conditionsAsAlternatives, hasConditions } from './conditional-schemas.ts';
import { END_OF_VALUE, GbnfRules, GrammarTooLargeError } from './gbnf-rules.ts';
import { canonicalJson, jsonLiteralGbnf } from './json-literal-gbnf.ts';
import { MergeRefusedError, mergeSchemas } from './merge-schemas.ts';
import { negateSchema } from './negate-schema.ts';
import { numberRangeGbnf } from './number-range-gbnf.ts';
import { objectGbnf } from './object-gbnf.ts';
import { RegexNotSupportedError, regexToGbnf } from './regex-to-gbnf.ts';
import { countKeyword, isSchemaObject, type SchemaCompiler, type SchemaObject } from './schema-compiler.ts';
import { DEFAULT_BASE, SchemaResources } from './schema-resources.ts';
import { STRING_FORMATS, stringFormatGbnf } from './string-format-gbnf.ts';
import { unsupportedWriterKeyword, WRITER_TYPE_KEYWORDS } from './writer-keywords.ts';

const MAX_DEPTH = 64;
const MAX_STRING_LENGTH = 10_000;
const TYPES = ['null', 'boolean', 'object', 'array', 'number', 'integer', 'string'];

/** A rule that matches nothing, for a schema reached by reference that allows no value. */
const NEVER = '[^\\x00-\\U0010FFFF]';

class Writer implements SchemaCompiler {
  readonly rules = new GbnfRules();
  readonly #refRules = new Map<unknown, Map<string, string>>();
  #depth = 0;

  readonly resources: SchemaResources;
  readonly param: string;
  constructor(resources: SchemaResources, param: string) {
    this.resources = resources;
    this.param = param;
  }

  invalid(pointer: string, message: string): never {
    throw ApiError.invalidRequest(`${this.param} at ${pointer === '' ? 'the root' : pointer}: ${message}`, this.param, 'unsupported_schema');
  }

  refuse(pointer: string, keyword: string, why: string): never {
    this.invalid(pointer, `the keyword '${keyword}' is not supported (${why}). Structured output is enforced by a grammar, so svc refuses what it cannot enforce rather than ignore it.`);
  }

  compile(node: unknown, base: string, pointer: string): string | undefined {
    if (this.#depth >= MAX_DEPTH) this.invalid(pointer, `the schema nests deeper than ${MAX_DEPTH} levels.`);
    this.#depth++;
    try {
      return this.#compile(node, base, pointer);
    } finally {
      this.#depth--;
    }
  }

  #compile(input: unknown, base: string, pointer: string): string | undefined {
    if (input === true) return this.rules.common('value');
    if (input === false) return undefined;
    if (!isSchemaObject(input)) this.invalid(pointer, `a schema must be an object or a boolean, not ${quoteInput(input)}.`);
    for (const keyword of Object.keys(input)) {
      const why = unsupportedWriterKeyword(input, keyword);
      if (why !== undefined) this.refuse(pointer, keyword, why);
    }
    base = this.resources.baseOf(input, base);
    const node = this.#withoutConditions(input, pointer);
    const constraining = Object.keys(node).filter((k) => WRITER_TYPE_KEYWORDS.has(k) || ['$ref', 'allOf', 'anyOf', 'oneOf', 'not', 'enum', 'const', 'type'].includes(k));
    if (Object.hasOwn(node, '$ref')) {
      const target = this.#resolve(node, base, pointer);
      if (constraining.length === 1) return this.#refRule(target.node, target.base, `${pointer}/$ref`);
      return this.#merged([target.node, withoutKeys(node, ['$ref'])], base, pointer, '$ref');
    }
    if (Object.hasOwn(node, 'allOf')) {
      const members = node.allOf;
      if (!Array.isArray(members) || members.length === 0) this.invalid(`${pointer}/allOf`, "'allOf' must be a non-empty array of schemas.");
      return this.#merged([withoutKeys(node, ['allOf']), ...members], base, pointer, 'allOf');
    }
    if (Object.hasOwn(node, 'anyOf') && Object.hasOwn(node, 'oneOf')) this.refuse(pointer, 'oneOf', 'anyOf and oneOf together cannot be enforced');
    for (const keyword of ['anyOf', 'oneOf'] as const) {
      if (!Object.hasOwn(node, keyword)) continue;
      const alternatives = node[keyword];
      if (!Array.isArray(alternatives) || alternatives.length === 0) this.invalid(`${pointer}/${keyword}`, `'${keyword}' must be a non-empty array of schemas.`);
      const siblings = withoutKeys(node, [keyword]);
      const hasSiblings = Object.keys(siblings).some((k) => constraining.includes(k));
      const rules = alternatives.map((alt, i) => {
        const at = `${pointer}/${keyword}/${i}`;
        return hasSiblings ? this.#merged([siblings, alt], base, at, keyword) : this.compile(alt, base, at);
      }).filter((r) => r !== undefined);
      return rules.length === 0 ? undefined : this.rules.add(rules.join(' | '));
    }
    if (Object.hasOwn(node, 'not') && !isTypesOnly(node.not)) {
      const not = negateSchema(node.not);
      if (not === undefined) this.refuse(pointer, 'not', 'the negation of this schema cannot be written as a schema (negate-schema.ts)');
      return this.#merged([withoutKeys(node, ['not']), not], base, pointer, 'not');
    }
    if (Object.hasOwn(node, 'enum') || Object.hasOwn(node, 'const')) return this.#literals(node, pointer, constraining);
    return this.#types(node, base, pointer);
  }

  /**
   * `if`/`then`/`else` and the dependencies as `anyOf` (conditional-schemas.ts); then/else
   * without if, and minContains/maxContains without contains, dropped: JSON Schema ignores them,
   * and merged with another schema's keywords they would apply to what is not theirs.
   */
  #withoutConditions(node: SchemaObject, pointer: string): SchemaObject {
    if (!Object.hasOwn(node, 'contains') && (Object.hasOwn(node, 'minContains') || Object.hasOwn(node, 'maxContains'))) node = withoutKeys(node, ['minContains', 'maxContains']);
    if (!Object.hasOwn(node, 'if') && (Object.hasOwn(node, 'then') || Object.hasOwn(node, 'else'))) node = withoutKeys(node, ['then', 'else']);
    if (Object.hasOwn(node, 'if') && !hasConditions(node)) node = withoutKeys(node, ['if']);
    if (!hasConditions(node)) return node;
    try {
      return conditionsAsAlternatives(node);
    } catch (error) {
      if (error instanceof ConditionRefusedError) this.refuse(pointer, error.keyword, error.message);
      throw error;
    }
  }

  #resolve(node: SchemaObject, base: string, pointer: string): { node: unknown; base: string } {
    const ref = node.$ref;
    if (typeof ref !== 'string') this.invalid(`${pointer}/$ref`, `'$ref' must be a string, not ${quoteInput(ref)}.`);
    const target = this.resources.resolve(ref, base);
    if (target === undefined) this.invalid(`${pointer}/$ref`, `the reference ${quoteInput(ref)} is not supported: it points outside the schema or to nothing in it (svc fetches nothing).`);
    return target;
  }

  /** One rule per referenced schema, so a schema that refers to itself is a recursive rule. */
  #refRule(target: unknown, base: string, pointer: string): string | undefined {
    const byBase = this.#refRules.get(target) ?? new Map<string, string>();
    this.#refRules.set(target, byBase);
    const known = byBase.get(base);
    if (known !== undefined) return known;
    const name = this.rules.reserve();
    byBase.set(base, name);
    const body = this.compile(target, base, pointer);
    this.rules.define(name, body ?? NEVER);
    return body === undefined ? undefined : name;
  }

  /** The values every member allows: references followed, members merged one by one. */
  #merged(members: unknown[], base: string, pointer: string, keyword: string): string | undefined {
    let acc: SchemaObject = {};
    const queue = [...members];
    let steps = 0;
    while (queue.length > 0) {
      if (++steps > 256) this.refuse(pointer, keyword, 'the schemas to combine nest too deeply');
      const member = queue.shift();
      if (member === true) continue;
      if (member === false) return undefined;
      if (!isSchemaObject(member)) this.invalid(pointer, `a schema must be an object or a boolean, not ${quoteInput(member)}.`);
      const memberBase = this.resources.baseOf(member, base);
      if (memberBase !== base) this.refuse(pointer, keyword, 'schemas with different $id bases cannot be combined');
      let obj = this.#withoutConditions(member, pointer);
      if (Object.hasOwn(obj, '$ref')) {
        const target = this.#resolve(obj, base, pointer);
        if (target.base !== base) this.refuse(pointer, keyword, 'a reference into another $id resource cannot be combined with other keywords');
        queue.push(target.node);
        obj = withoutKeys(obj, ['$ref']);
      }
      if (Object.hasOwn(obj, 'allOf')) {
        const inner = obj.allOf;
        if (!Array.isArray(inner)) this.invalid(`${pointer}/allOf`, "'allOf' must be an array of schemas.");
        queue.push(...inner);
        obj = withoutKeys(obj, ['allOf']);
      }
      try {
        const next = mergeSchemas(acc, obj);
        if (next === false) return undefined;
        acc = next;
      } catch (error) {
        if (error instanceof MergeRefusedError) this.refuse(pointer, keyword, `${error.message}; svc combines schemas only where the result is a plain schema`);
        throw error;
      }
    }
    return this.compile(acc, base, pointer);
  }

  #literals(node: SchemaObject, pointer: string, constraining: string[]): string | undefined {
    const others = constraining.filter((k) => k !== 'enum' && k !== 'const' && k !== 'type' && k !== 'not');
    if (others.length > 0) this.refuse(pointer, others[0]!, 'keywords beside enum/const other than type are not applied to its values');
    if (Object.hasOwn(node, 'not')) this.refuse(pointer, 'not', "'not' beside enum/const is not supported");
    let values: unknown[];
    if (Object.hasOwn(node, 'enum')) {
      if (!Array.isArray(node.enum) || node.enum.length === 0) this.invalid(`${pointer}/enum`, "'enum' must be a non-empty array.");
      values = node.enum;
      if (Object.hasOwn(node, 'const')) values = values.filter((v) => canonicalJson(v) === canonicalJson(node.const));
    } else values = [node.const];
    const types = node.type === undefined ? undefined : new Set(Array.isArray(node.type) ? node.type : [node.type]);
    const ofType = (v: unknown): boolean => {
      if (types === undefined) return true;
      const t = v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v === 'number' ? (Number.isInteger(v) ? 'integer' : 'number') : typeof v;
      return types.has(t) || (t === 'integer' && types.has('number'));
    };
    const seen = new Set<string>();
    const parts: string[] = [];
    for (const v of values) {
      const key = canonicalJson(v);
      if (!ofType(v) || seen.has(key)) continue;
      seen.add(key);
      parts.push(jsonLiteralGbnf(this.rules, v));
    }
    return parts.length === 0 ? undefined : this.rules.add(parts.join(' | '));
  }

  #types(node: SchemaObject, base: string, pointer: string): string | undefined {
    let types: string[];
    if (node.type === undefined) types = ['null', 'boolean', 'object', 'array', 'number', 'string'];
    else {
      const raw = Array.isArray(node.type) ? node.type : [node.type];
      if (raw.length === 0 || raw.some((t) => typeof t !== 'string' || !TYPES.includes(t))) this.invalid(`${pointer}/type`, `${quoteInput(node.type)} is not a JSON Schema type.`);
      types = [...new Set(raw as string[])];
      if (types.includes('number')) types = types.filter((t) => t !== 'integer');
    }
    if (Object.hasOwn(node, 'not')) types = this.#notTypes(node, types, pointer);
    const parts = types.map((t) => this.#type(node, t, base, pointer)).filter((r) => r !== undefined);
    return parts.length === 0 ? undefined : this.rules.add(parts.join(' | '));
  }

  /** `not` whose schema only names types (or allows everything or nothing): those types removed. */
  #notTypes(node: SchemaObject, types: string[], pointer: string): string[] {
    const not = node.not;
    if (not === false || (isSchemaObject(not) && Object.keys(not).length === 0) || not === true) return not === false ? types : [];
    if (!isSchemaObject(not) || Object.keys(not).some((k) => k !== 'type' && k !== 'description' && k !== 'title')) {
      this.refuse(pointer, 'not', "negation is enforced only for 'not' of types");
    }
    const excluded = new Set(Array.isArray(not.type) ? not.type : [not.type]);
    // Numbers that are not integers: a grammar for them is not written, so numbers are left out (a subset).
    if (excluded.has('integer') && !excluded.has('number')) types = types.filter((t) => t !== 'number');
    return types.filter((t) => !excluded.has(t) && !(t === 'integer' && excluded.has('number')));
  }

  #type(node: SchemaObject, type: string, base: string, pointer: string): string | undefined {
    const { rules } = this;
    switch (type) {
      case 'null': return rules.common('null');
      case 'boolean': return rules.common('boolean');
      case 'object': return hasAny(node, 'object') ? objectGbnf(this, node, base, pointer) : rules.common('object');
      case 'array': return hasAny(node, 'array') ? arrayGbnf(this, node, base, pointer) : rules.common('array');
      case 'string': return this.#string(node, pointer);
      default: return this.#number(node, type === 'integer', pointer);
    }
  }

  #string(node: SchemaObject, pointer: string): string | undefined {
    const { rules } = this;
    const min = countKeyword(this, node, 'minLength', pointer);
    const max = countKeyword(this, node, 'maxLength', pointer);
    const pattern = node.pattern;
    const format = node.format;
    const lengths = min !== undefined || max !== undefined;
    if (pattern !== undefined && (format !== undefined || lengths)) this.refuse(pointer, 'pattern', 'a pattern together with a format or length limits cannot be enforced');
    if (format !== undefined && lengths) this.refuse(pointer, 'format', 'a format together with length limits cannot be enforced');
    if (pattern !== undefined) {
      if (typeof pattern !== 'string') this.invalid(`${pointer}/pattern`, "'pattern' must be a string.");
      try {
        new RegExp(pattern, 'u');
      } catch {
        this.invalid(`${pointer}/pattern`, `the pattern ${quoteInput(pattern)} is not a valid regular expression.`);
      }
      try {
        return rules.add(`"\\"" ${regexToGbnf(rules, pattern)} "\\""`);
      } catch (error) {
        if (error instanceof RegexNotSupportedError) this.refuse(pointer, 'pattern', `only a subset of regular expressions is: ${error.message}`);
        throw error;
      }
    }
    if (format !== undefined) {
      if (typeof format !== 'string' || !STRING_FORMATS.has(format)) {
        this.invalid(`${pointer}/format`, `the format ${quoteInput(format)} is not supported: the grammar enforces ${[...STRING_FORMATS].join(', ')}.`);
      }
      return rules.add(`"\\"" ${stringFormatGbnf(rules, format)!} "\\""`);
    }
    if (!lengths) return rules.common('string');
    if ((max ?? min ?? 0) > MAX_STRING_LENGTH || (min ?? 0) > MAX_STRING_LENGTH) this.refuse(pointer, max !== undefined ? 'maxLength' : 'minLength', `lengths above ${MAX_STRING_LENGTH} are not enforced by a grammar`);
    if (max !== undefined && (min ?? 0) > max) return undefined;
    return rules.add(`"\\"" ${rules.common('char')}{${min ?? 0},${max ?? ''}} "\\""`.replace('{0,}', '*'));
  }

  #number(node: SchemaObject, integer: boolean, pointer: string): string | undefined {
    const { rules } = this;
    const num = (k: string): number | undefined => {
      if (!Object.hasOwn(node, k)) return undefined;
      const v = node[k];
      if (typeof v !== 'number' || !Number.isFinite(v)) this.invalid(`${pointer}/${k}`, `'${k}' must be a number.`);
      return v;
    };
    const [minimum, exMin, maximum, exMax] = ['minimum', 'exclusiveMinimum', 'maximum', 'exclusiveMaximum'].map(num);
    const lower = exMin !== undefined && (minimum === undefined || exMin >= minimum) ? { v: exMin, ex: true } : minimum === undefined ? undefined : { v: minimum, ex: false };
    const upper = exMax !== undefined && (maximum === undefined || exMax <= maximum) ? { v: exMax, ex: true } : maximum === undefined ? undefined : { v: maximum, ex: false };
    const step = num('multipleOf');
    if (step !== undefined && step <= 0) this.invalid(`${pointer}/multipleOf`, "'multipleOf' must be above 0.");
    if (step !== undefined && step !== 1) {
      // A bound at zero only decides the sign (what `if`/`else` rewrites often leave beside a step).
      const sign = lower === undefined && upper === undefined ? 'any' : upper === undefined && lower?.v === 0 ? (lower.ex ? 'positive' : 'non-negative') : lower === undefined && upper?.v === 0 ? (upper.ex ? 'negative' : 'non-positive') : undefined;
      if (!Number.isInteger(step) || step > 100 || sign === undefined) this.refuse(pointer, 'multipleOf', 'only whole steps up to 100, without bounds or with one bound at 0, are enforced');
      return multipleOfGbnf(this, step, sign);
    }
    integer ||= step === 1;
    if (lower === undefined && upper === undefined) return rules.common(integer ? 'int' : 'number');
    const range = numberRangeGbnf(rules, {
      ...(lower !== undefined ? { minimum: lower.v, exclusiveMinimum: lower.ex } : {}),
      ...(upper !== undefined ? { maximum: upper.v, exclusiveMaximum: upper.ex } : {}),
    }, integer);
    return range;
  }
}

/** `not` of nothing but types (or of everything or nothing), which #notTypes writes exactly. */
function isTypesOnly(not: unknown): boolean {
  return typeof not === 'boolean' || (isSchemaObject(not) && Object.keys(not).every((k) => k === 'type' || k === 'description' || k === 'title'));
}

function withoutKeys(node: SchemaObject, keys: string[]): SchemaObject {
  return Object.fromEntries(Object.entries(node).filter(([k]) => !keys.includes(k)));
}

function hasAny(node: SchemaObject, type: 'object' | 'array'): boolean {
  const keys = type === 'object'
    ? ['properties', 'additionalProperties', 'patternProperties', 'required', 'minProperties', 'maxProperties', 'propertyNames', 'unevaluatedProperties']
    : ['items', 'prefixItems', 'additionalItems', 'minItems', 'maxItems', 'uniqueItems', 'unevaluatedItems', 'contains'];
  return keys.some((k) => Object.hasOwn(node, k));
}

/** Integers of at most 15 digits that `step` divides, of the given sign: the remainder so far is the state. */
function multipleOfGbnf(c: SchemaCompiler, step: number, sign: 'any' | 'positive' | 'non-negative' | 'negative' | 'non-positive'): string {
  const { rules } = c;
  const names = new Map<string, string>();
  const state = (rem: number, digits: number): string => {
    const key = `${rem}/${digits}`;
    const known = names.get(key);
    if (known !== undefined) return known;
    const name = rules.reserve();
    names.set(key, name);
    const parts = rem === 0 ? ['""'] : [];
    if (digits < 15) {
      const byNext = new Map<number, number[]>();
      for (let d = 0; d <= 9; d++) byNext.set((rem * 10 + d) % step, [...(byNext.get((rem * 10 + d) % step) ?? []), d]);
      for (const [next, ds] of byNext) parts.push(`[${ds.join('')}] ${state(next, digits + 1)}`);
    }
    rules.define(name, parts.length === 0 ? NEVER : parts.join(' | '));
    return name;
  };
  const first = new Map<number, number[]>();
  for (let d = 1; d <= 9; d++) first.set(d % step, [...(first.get(d % step) ?? []), d]);
  const body = [...first].map(([rem, ds]) => `[${ds.join('')}] ${state(rem, 1)}`).join(' | ');
  switch (sign) {
    case 'positive': return rules.add(body);
    case 'non-negative': return rules.add(`"0" | ${body}`);
    case 'negative': return rules.add(`"-" (${body})`);
    case 'non-positive': return rules.add(`"0" | "-" (${body})`);
    default: return rules.add(`"-"? ("0" | ${body})`);
  }
}

/**
 * The GBNF for a client's JSON schema, ending in the end-of-value stop text, or a 400
 * (`unsupported_schema`, `param`) naming the keyword that cannot be enforced and where.
 */
export function schemaToGbnf(schema: unknown, param: string): string {
  const resources = new SchemaResources(schema);
  const writer = new Writer(resources, param);
  try {
    const root = writer.compile(schema, DEFAULT_BASE, '');
    if (root === undefined) writer.invalid('', 'the schema allows no value at all.');
    return writer.rules.text(`${root} ${END_OF_VALUE}`);
  } catch (error) {
    if (error instanceof GrammarTooLargeError) writer.invalid('', 'the schema needs too large a grammar.');
    throw error;
  }
}

