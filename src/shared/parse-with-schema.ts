import type { z } from 'zod';
import { ApiError } from './api-error.ts';
import { truncateInput } from './quote-input.ts';

/**
 * Validates untrusted input against a zod schema and turns the first issue into an ApiError
 * that names the offending field (`param`, dotted path) and says what was expected.
 * OpenAI-shaped endpoints answer 400; the solve endpoints answer 422 for schema mismatches.
 */
export function parseWithSchema<S extends z.ZodType>(
  schema: S,
  value: unknown,
  options: { status?: 400 | 422; prefix?: string } = {},
): z.output<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  // An unknown field is reported at the object's path; name the field itself.
  const unknownKey = issue?.code === 'unrecognized_keys' ? issue.keys[0] : undefined;
  // Keys are user input too (an unknown key may be a megabyte long): each is cut short.
  const path = [options.prefix, ...(issue?.path ?? []).map((p) => truncateInput(String(p))), unknownKey === undefined ? undefined : truncateInput(unknownKey)]
    .filter((p) => p !== undefined && p !== '')
    .join('.');
  const where = path === '' ? 'request body' : `'${path}'`;
  const message = unknownKey !== undefined
    ? `Unrecognized request argument supplied: ${path}`
    : `Invalid ${where}: ${issue?.message ?? 'invalid value'}`;
  const param = path === '' ? null : path;
  throw options.status === 422 ? ApiError.unprocessable(message, param) : ApiError.invalidRequest(message, param);
}
