/**
 * Error messages repeat what the client sent so the client can see what was wrong, but never
 * all of it: a 1 MB model name must not come back as a 1 MB error body.
 */

/** The most characters of one piece of user input an error message repeats. */
export const MAX_ECHO_CHARS = 100;

/** `text` cut to `max` characters (never inside a surrogate pair), saying how long it was. */
export function truncateInput(text: string, max = MAX_ECHO_CHARS): string {
  if (text.length <= max) return text;
  let end = max;
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--;
  return `${text.slice(0, end)}… (${text.length} characters)`;
}

/**
 * A value from a request, as an error message shows it: strings quoted and truncated, other
 * JSON values by their kind (an object sent where a name belongs is not worth printing).
 */
export function quoteInput(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(truncateInput(value));
  if (Array.isArray(value)) return 'an array';
  if (value === null) return 'null';
  if (typeof value === 'object') return 'an object';
  return truncateInput(String(value));
}
