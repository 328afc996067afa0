/**
 * Keywords svc accepts in a schema although its grammar does not enforce them completely, so a
 * reply must be validated against the client's schema after generation (the grammar alone lets
 * through what the JSON Schema Test Suite's `valid: false` instances show, bench:schema-coverage):
 *
 * - `oneOf`: the grammar writes one alternative, but a value that also matches another breaks
 *   "exactly one" (`oneOf: [{}, {type: 'number'}]` and a number);
 * - `format` (`date`, `date-time`, `time`): the grammar checks the shape, not the calendar
 *   (`2023-02-30`, leap seconds);
 * - `minimum`/`maximum` at ±(2^53 − 1) (zod's integer bounds): a 16-digit integer beyond them fits
 *   the grammar.
 */
export const AFTER_GENERATION_KEYWORDS: ReadonlySet<string> = new Set(['oneOf', 'format', 'minimum', 'maximum']);

/** Schema maps whose keys are names (of properties, definitions), not keywords. */
const NAME_MAPS = new Set(['properties', '$defs', 'definitions', 'patternProperties', 'dependentSchemas']);

export interface KeywordAt {
  keyword: string;
  /** JSON pointer of the schema object holding the keyword ('' for the root). */
  pointer: string;
}

/**
 * Where the client's schema uses a keyword the grammar does not fully enforce: an empty list
 * means the grammar alone guarantees a valid reply. Walks the schema as given (any shape: a
 * malformed schema is toGrammarSchema's to refuse).
 */
export function keywordsCheckedAfterGeneration(schema: unknown): KeywordAt[] {
  const found: KeywordAt[] = [];
  const visit = (node: unknown, pointer: string, depth: number): void => {
    if (depth > 64 || typeof node !== 'object' || node === null) return;
    if (Array.isArray(node)) {
      node.forEach((item, i) => visit(item, `${pointer}/${i}`, depth + 1));
      return;
    }
    for (const [key, value] of Object.entries(node)) {
      const at = `${pointer}/${key.replaceAll('~', '~0').replaceAll('/', '~1')}`;
      if (NAME_MAPS.has(key) && typeof value === 'object' && value !== null && !Array.isArray(value)) {
        for (const [name, sub] of Object.entries(value)) visit(sub, `${at}/${name.replaceAll('~', '~0').replaceAll('/', '~1')}`, depth + 1);
        continue;
      }
      if (AFTER_GENERATION_KEYWORDS.has(key) && !(key === 'oneOf' && Array.isArray(value) && value.length < 2)) found.push({ keyword: key, pointer });
      if (key !== 'enum' && key !== 'const' && key !== 'default' && key !== 'examples') visit(value, at, depth + 1);
    }
  };
  visit(schema, '', 0);
  return found;
}
