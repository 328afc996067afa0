/**
 * The JSON Schema keywords the grammar-schema walk (grammar-schema.ts) knows, by what it does
 * with them: annotations it drops, constraints it refuses (and why), and the keywords that
 * belong to each type, from which a schema without `type` gets one.
 */

/** Keywords that only describe: accepted, and dropped (`description` is kept for the docs node-llama-cpp renders). */
export const ANNOTATIONS = new Set([
  '$schema', '$id', '$comment', '$anchor', '$vocabulary', 'title', 'description', 'default', 'examples',
  'deprecated', 'readOnly', 'writeOnly', 'contentEncoding', 'contentMediaType', '$defs', 'definitions',
  // OpenAPI 3.0's `nullable: true` only widens what is allowed; never writing null is valid.
  'nullable',
  // Gemini's property order hint; properties are written in the order given anyway.
  'propertyOrdering',
  // An anchor only `$dynamicRef` could reach, and that is refused.
  '$dynamicAnchor',
  // OpenAPI's annotations (pydantic writes `discriminator` beside the `oneOf` that does the work).
  'discriminator', 'example', 'externalDocs', 'xml',
]);

/** Vendor extensions (`x-…`, OpenAPI's convention) describe by definition: treated as annotations. */
export function isAnnotation(keyword: string): boolean {
  return ANNOTATIONS.has(keyword) || keyword.startsWith('x-');
}

/** Why each refused keyword cannot be enforced by the grammar, for the error message. */
export const REFUSED = new Map<string, string>([
  ['pattern', 'regular expressions cannot be turned into a grammar here'],
  ['patternProperties', 'property names by regular expression cannot be enforced'],
  ['dependentRequired', 'conditional requirements cannot be enforced'],
  ['dependentSchemas', 'conditional schemas cannot be enforced'],
  ['dependencies', 'conditional requirements cannot be enforced'],
  ['exclusiveMinimum', 'numeric bounds cannot be enforced'],
  ['exclusiveMaximum', 'numeric bounds cannot be enforced'],
  ['multipleOf', 'numeric steps cannot be enforced'],
  ['contains', 'array content conditions cannot be enforced'],
  ['minContains', 'array content conditions cannot be enforced'],
  ['maxContains', 'array content conditions cannot be enforced'],
  ['unevaluatedItems', 'unevaluated items cannot be enforced'],
  ['not', 'negation cannot be enforced'],
  ['if', 'conditional schemas cannot be enforced'],
  ['then', 'conditional schemas cannot be enforced'],
  ['else', 'conditional schemas cannot be enforced'],
  ['$dynamicRef', 'dynamic references are not supported'],
  ['$recursiveRef', 'dynamic references are not supported'],
  ['contentSchema', 'schemas of encoded content cannot be enforced'],
]);

export const TYPES = new Set(['object', 'array', 'string', 'number', 'integer', 'boolean', 'null']);
export const FORMATS = new Set(['date-time', 'date', 'time']);

export const OBJECT_KEYWORDS = ['properties', 'additionalProperties', 'required', 'minProperties', 'maxProperties', 'propertyNames', 'unevaluatedProperties'];
export const ARRAY_KEYWORDS = ['items', 'prefixItems', 'additionalItems', 'minItems', 'maxItems', 'uniqueItems'];
export const STRING_KEYWORDS = ['minLength', 'maxLength', 'format'];
export const NUMBER_KEYWORDS = ['minimum', 'maximum'];

/** The keywords the walk translates into the grammar (each applied as grammar-schema.ts says). */
export const TRANSLATED = new Set([
  'type', 'enum', 'const', 'oneOf', 'anyOf', 'allOf', '$ref',
  ...OBJECT_KEYWORDS, ...ARRAY_KEYWORDS, ...STRING_KEYWORDS, ...NUMBER_KEYWORDS,
]);

/**
 * Why a keyword of a schema object is not taken, or undefined when it is (translated or an
 * annotation). Anything unknown is refused too: a misspelt `maxLenght` or a keyword of a newer
 * draft would otherwise be ignored, and the reply could break the rule the client meant.
 */
export function unsupportedReason(keyword: string): string | undefined {
  const why = REFUSED.get(keyword);
  if (why !== undefined) return why;
  if (TRANSLATED.has(keyword) || isAnnotation(keyword)) return undefined;
  return "svc does not know it; annotations svc accepts are listed in docs/runtime.md, and vendor extensions start with 'x-'";
}

export function hasAny(node: Readonly<Record<string, unknown>>, keywords: readonly string[]): boolean {
  return keywords.some((k) => Object.hasOwn(node, k));
}

/** Keywords present beside `keyword` that constrain (annotations and unknown keywords aside). */
export function constrainingSiblings(node: Readonly<Record<string, unknown>>, keyword: string): string[] {
  return Object.keys(node).filter((k) => k !== keyword && TRANSLATED.has(k));
}
