import type { ApiKeyRecord, KeyScope, NewKey } from '../key-store.ts';
import { newId } from '../../shared/new-id.ts';
import type { ApiKeyRow } from './hosted-database.ts';
import { hashSecret, KEY_PREFIXES, newKeySecret } from './store-secrets.ts';

export function toKeyRecord(row: Omit<ApiKeyRow, 'secret_hash'>): ApiKeyRecord {
  return {
    id: row.id,
    accountId: row.account_id,
    scope: row.scope as KeyScope,
    name: row.name,
    project: row.project,
    prefix: row.prefix,
    lastFour: row.last_four,
    createdAt: new Date(Number(row.created_at)),
    lastUsedAt: row.last_used_at === null ? null : new Date(Number(row.last_used_at)),
    revokedAt: row.revoked_at === null ? null : new Date(Number(row.revoked_at)),
  };
}

/** Every column of a key row (issueKeyWithinCap's INSERT … SELECT names them). */
export const KEY_COLUMNS = ['id', 'account_id', 'scope', 'name', 'project', 'prefix', 'last_four', 'secret_hash', 'created_at', 'last_used_at', 'revoked_at'] as const satisfies readonly (keyof ApiKeyRow)[];

/** A new key's row and its secret (issueKey and issueKeyWithinCap insert it). */
export function newKeyRow(accountId: string, input: NewKey): { row: ApiKeyRow; secret: string } {
  if (!KEY_PREFIXES.has(input.scope)) throw new TypeError(`unknown key scope: ${String(input.scope)}`);
  const secret = newKeySecret(input.scope);
  const row: ApiKeyRow = {
    id: newId('key_'),
    account_id: accountId,
    scope: input.scope,
    name: input.name ?? null,
    project: input.project ?? null,
    prefix: secret.slice(0, 12),
    last_four: secret.slice(-4),
    secret_hash: hashSecret(secret),
    created_at: Date.now(),
    last_used_at: null,
    revoked_at: null,
  };
  return { row, secret };
}
