/**
 * Error messages repeat what the client sent so the client can see what was wrong, but never
 * all of it: a 1 MB model name must not come back as a 1 MB error body.
 */

/** The most characters of one piece of user input an error message repeats. */
export const MAX_ECHO_CHARS = 100;

/** The first `max` UTF-16 code units of `text`, one fewer where the cut would split a surrogate pair. */
export function sliceWhole(text: string, max: number): string {
  if (text.length <= max) return text;
  const last = text.charCodeAt(max - 1);
  return text.slice(0, last >= 0xd800 && last <= 0xdbff ? max - 1 : max);
}

/** `text` cut to `max` characters (never inside a surrogate pair), saying how long it was. */
export function truncateInput(text: string, max = MAX_ECHO_CHARS): string {
  if (text.length <= max) return text;
  return `${sliceWhole(text, max)}… (${text.length} characters)`;
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
