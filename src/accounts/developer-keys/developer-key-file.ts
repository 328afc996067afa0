import { z } from 'zod';
import type { KeyScope } from '../key-store.ts';

export const DEVELOPER_KEY_FILE_FORMAT = 'svc-developer-keys';
export const DEVELOPER_KEY_FILE_VERSION = 1;

const KEY_SCOPES = ['developer_runtime', 'supercomputer'] as const satisfies readonly KeyScope[];
const isoTime = z.iso.datetime({ offset: true });

/** One key in an exported file: metadata and the secret's SHA-256, never the secret. */
export const exportedKeySchema = z.strictObject({
  id: z.string().min(1).max(200),
  account_id: z.string().min(1).max(200),
  scope: z.enum(KEY_SCOPES),
  project: z.string().max(200).nullable(),
  name: z.string().max(500).nullable(),
  /** Lower-case hex, as the store keeps it. */
  secret_sha256: z.string().regex(/^[0-9a-f]{64}$/, 'must be 64 lower-case hex digits'),
  /** Kept so a revoked key is refused as revoked, not as unknown. */
  revoked_at: isoTime.nullable(),
});
export type ExportedKey = z.infer<typeof exportedKeySchema>;

/**
 * `svc admin keys export` writes this; `svc serve --developer-keys FILE` reads it. Versioned
 * so a later format is refused with a clear message instead of being misread.
 */
export const developerKeyFileSchema = z.strictObject({
  format: z.literal(DEVELOPER_KEY_FILE_FORMAT),
  version: z.literal(DEVELOPER_KEY_FILE_VERSION),
  exported_at: isoTime,
  keys: z.array(exportedKeySchema).max(1_000_000),
});
export type DeveloperKeyFile = z.infer<typeof developerKeyFileSchema>;

/** Parses a file's text; throws an Error with a one-line reason (the first problem found). */
export function parseDeveloperKeyFile(text: string): DeveloperKeyFile {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new Error(`not JSON (${(error as Error).message})`);
  }
  const result = developerKeyFileSchema.safeParse(json);
  if (!result.success) {
    const issue = result.error.issues[0];
    const at = issue === undefined || issue.path.length === 0 ? '' : `${issue.path.join('.')}: `;
    throw new Error(`not a svc developer-key file (${at}${issue?.message ?? 'invalid'})`);
  }
  const ids = new Set<string>();
  for (const key of result.data.keys) {
    if (ids.has(key.id)) throw new Error(`not a svc developer-key file (key ${key.id} appears twice)`);
    ids.add(key.id);
  }
  return result.data;
}
