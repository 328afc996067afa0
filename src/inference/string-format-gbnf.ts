/**
 * GBNF for the string formats svc enforces (the content between the quotes). Each writes only
 * values the format's RFC and zod's check both accept, so a subset of either:
 *
 * - `date` (RFC 3339 full-date): months 01–12 and the days each month has, 29 February only in
 *   leap years (years divisible by 4, centuries by 400) — exact;
 * - `time` (RFC 3339 full-time): hours 00–23, minutes and seconds 00–59 (no leap second 60),
 *   optional fraction, then `Z` or an offset ±HH:MM;
 * - `date-time`: a date, `T`, a time;
 * - `uuid` (RFC 4122 text form): 8-4-4-4-12 hex digits;
 * - `email`: dot-separated atoms of letters, digits, `_`, `+`, `-`, `@`, then at least two
 *   dot-separated DNS labels, the last all letters (no quoted local parts or IP literals);
 * - `ipv4`: four decimal octets 0–255 without leading zeros; `ipv6`: eight groups of 1–4
 *   lowercase hex digits (no `::` shortening);
 * - `hostname` (and `idn-hostname`): up to 8 DNS labels of ASCII letters, digits, inner hyphens;
 * - `uri` (`iri`, `uri-template`): scheme `://` hostname, then path segments and a query of
 *   unreserved characters; `uri-reference` (`iri-reference`): that or an absolute path;
 * - `json-pointer`, `relative-json-pointer` (RFC 6901, the JSON Schema draft): `~0`/`~1` escapes;
 * - `duration` (RFC 3339 appendix A): the ISO 8601 forms P…Y…M…DT…H…M…S and P…W, whole numbers;
 * - `regex`: letters, digits and spaces (a valid expression whatever engine reads it);
 * - `idn-email`: as `email`.
 */
import type { GbnfRules } from './gbnf-rules.ts';

const TWO = '[0-9] [0-9]';
/** A DNS label: letters, digits and inner hyphens, at most 63 characters (RFC 1123). */
const LABEL = '[A-Za-z0-9] ([A-Za-z0-9-]{0,61} [A-Za-z0-9])?';
const FORMATS = new Map<string, (rules: GbnfRules) => string>([
  ['date', (rules) => {
    // Years divisible by 4: the last two digits are a multiple of 4 (00 only with a century divisible by 4).
    const mult4 = '([02468] [048] | [13579] [26])';
    const mult4NotZero = '([02468] [48] | [2468] "0" | [13579] [26])';
    const leap = rules.add(`[0-9] [0-9] ${mult4NotZero} | ${mult4} "00"`);
    const monthDay = rules.add([
      '("01" | "03" | "05" | "07" | "08" | "10" | "12") "-" ("0" [1-9] | [12] [0-9] | "3" [01])',
      '("04" | "06" | "09" | "11") "-" ("0" [1-9] | [12] [0-9] | "30")',
      '"02-" ("0" [1-9] | "1" [0-9] | "2" [0-8])',
    ].join(' | '));
    return rules.add(`[0-9]{4} "-" ${monthDay} | ${leap} "-02-29"`);
  }],
  ['time', (rules) => rules.add(`([01] [0-9] | "2" [0-3]) ":" [0-5] [0-9] ":" [0-5] [0-9] ("." [0-9]{1,9})? ("Z" | [-+] ([01] [0-9] | "2" [0-3]) ":" [0-5] [0-9])`)],
  ['date-time', (rules) => rules.add(`${stringFormatGbnf(rules, 'date')!} "T" ${stringFormatGbnf(rules, 'time')!}`)],
  ['uuid', (rules) => rules.add('[0-9a-fA-F]{8} "-" [0-9a-fA-F]{4} "-" [0-9a-fA-F]{4} "-" [0-9a-fA-F]{4} "-" [0-9a-fA-F]{12}')],
  ['email', (rules) => {
    const atom = '[A-Za-z0-9_+-]{1,32}';
    const label = '[A-Za-z0-9] ([A-Za-z0-9-]{0,61} [A-Za-z0-9])?';
    return rules.add(`${atom} ("." ${atom}){0,3} "@" (${label} "."){1,4} [A-Za-z]{2,24}`);
  }],
  ['idn-email', (rules) => stringFormatGbnf(rules, 'email')!],
  ['hostname', (rules) => rules.add(`${LABEL} ("." ${LABEL}){0,7}`)],
  ['idn-hostname', (rules) => stringFormatGbnf(rules, 'hostname')!],
  ['ipv6', (rules) => rules.add('[0-9a-f]{1,4} (":" [0-9a-f]{1,4}){7}')],
  ['uri', (rules) => rules.add(`[a-z] [a-z0-9+.-]{0,15} "://" ${stringFormatGbnf(rules, 'hostname')!} ("/" [A-Za-z0-9._~-]{0,64}){0,8} ("?" [A-Za-z0-9._~=&-]{0,128})?`)],
  ['iri', (rules) => stringFormatGbnf(rules, 'uri')!],
  ['uri-reference', (rules) => rules.add(`${stringFormatGbnf(rules, 'uri')!} | ("/" [A-Za-z0-9._~-]{1,64}){1,8}`)],
  ['iri-reference', (rules) => stringFormatGbnf(rules, 'uri-reference')!],
  ['uri-template', (rules) => stringFormatGbnf(rules, 'uri')!],
  ['json-pointer', (rules) => rules.add('("/" ([A-Za-z0-9._ -] | "~" [01]){0,64}){0,16}')],
  ['relative-json-pointer', (rules) => rules.add(`("0" | [1-9] [0-9]{0,5}) ("#" | ${stringFormatGbnf(rules, 'json-pointer')!})`)],
  ['duration', (rules) => {
    const n = '[0-9]{1,6}';
    const time = `"T" (${n} "H" (${n} "M" (${n} "S")?)? | ${n} "M" (${n} "S")? | ${n} "S")`;
    const date = `(${n} "Y" (${n} "M" (${n} "D")?)? | ${n} "M" (${n} "D")? | ${n} "D")`;
    return rules.add(`"P" (${date} (${time})? | ${time} | ${n} "W")`);
  }],
  // Letters, digits and spaces only: always a valid regular expression, matching itself.
  ['regex', (rules) => rules.add('[A-Za-z0-9 ]{0,256}')],
  ['ipv4', (rules) => {
    const octet = rules.add(`"25" [0-5] | "2" [0-4] [0-9] | "1" ${TWO} | [1-9] [0-9] | [0-9]`);
    return rules.add(`${octet} "." ${octet} "." ${octet} "." ${octet}`);
  }],
]);

export const STRING_FORMATS: ReadonlySet<string> = new Set(FORMATS.keys());

/** A rule for the content of a string in `name` format, or undefined for a format svc does not enforce. */
export function stringFormatGbnf(rules: GbnfRules, name: string): string | undefined {
  return FORMATS.get(name)?.(rules);
}
