import { z } from 'zod';
import { ApiError } from '../shared/api-error.ts';
import { quoteInput } from '../shared/quote-input.ts';

/** Letters, digits, `.`, `_`, `-`, starting with a letter or digit: safe in a URL path, a file name and a shell. */
export const spaceNameSchema = z.string().min(1).max(64).regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/);

/** The name as given, or 400 `invalid_space_name`. */
export function parseSpaceName(name: unknown, param = 'name'): string {
  const result = spaceNameSchema.safeParse(name);
  if (result.success) return result.data;
  throw ApiError.invalidRequest(
    `Invalid space name ${quoteInput(name)}: 1-64 characters, letters, digits, '.', '_' or '-', starting with a letter or digit.`,
    param,
    'invalid_space_name',
  );
}

/** Names are unique regardless of case ("Notes" and "notes" are one space); names are ASCII, so this is exact. */
export function spaceNameKey(name: string): string {
  return name.toLowerCase();
}
