/** The exponent node-llama-cpp 3.22's JSON number rules allow: up to 16 digits, either sign (GbnfNumber). */
const WIDE_EXPONENT = ' ([eE] [-+]? ("0" | [1-9] [0-9]{0,15}))?';
/** At most two digits: with 16 mantissa digits the largest number is about 1e115, finite. */
const BOUNDED_EXPONENT = ' ([eE] [-+]? ("0" | [1-9] [0-9]?))?';
const INTEGER_RULE = 'integer-number-rule ::= ';
/** node-llama-cpp's integer digits: up to 16, past 2^53 − 1; 15 keep every integer safe. */
const WIDE_INTEGER = '("0" | [1-9] [0-9]{0,15})';
const SAFE_INTEGER = '("0" | [1-9] [0-9]{0,14})';

/**
 * GBNF from node-llama-cpp with JSON numbers the caller's schema accepts. Its number rules let a
 * model write `1e999`, which JSON.parse reads as Infinity, and give integers an exponent too, so
 * `659e-89` passes as an "integer": replies the grammar accepted then failed the caller's schema
 * ("expected number, received Infinity", "expected int"), as the Vercel AI SDK's generateObject
 * reported. Integers lose the exponent; other numbers keep one of at most two digits. Integers
 * also keep to 15 digits: 16 allowed 9999999999999999, past 2^53 − 1, which zod's `z.int()` (and
 * so svc's own check of the reply, structured-reply-check.ts) rejects and JSON.parse rounds.
 * Returns the text unchanged when the rules are not there (another version).
 */
export function boundNumberExponents(gbnf: string): string {
  return gbnf
    .split('\n')
    .map((line) => (line.startsWith(INTEGER_RULE) ? line.replaceAll(WIDE_EXPONENT, '').replace(WIDE_INTEGER, SAFE_INTEGER) : line.replaceAll(WIDE_EXPONENT, BOUNDED_EXPONENT)))
    .join('\n');
}
