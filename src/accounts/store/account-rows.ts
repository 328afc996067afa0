import type { Selectable } from 'kysely';
import type { Account } from '../account-store.ts';
import { MAX_ACTIVE_KEYS_LIMIT, type Plan } from '../plan.ts';
import type { AccountRow } from './hosted-database.ts';
import { toJoules, toMillijoules } from './energy-units.ts';

/** An account row's columns, table-qualified: the key check and the session check join them in. */
export const accountColumns = [
  'accounts.id', 'accounts.name', 'accounts.monthly_allowance_mj', 'accounts.hosted_entitlement', 'accounts.enterprise', 'accounts.created_at',
  'accounts.disabled_at', 'accounts.max_active_keys',
] as const;

export function toAccount(row: Selectable<AccountRow>): Account {
  return {
    id: row.id,
    name: row.name,
    plan: {
      monthlyJouleAllowance: toJoules(Number(row.monthly_allowance_mj)),
      hostedEntitlement: Number(row.hosted_entitlement) === 1,
      enterprise: Number(row.enterprise) === 1,
      // Only a plan's own cap is listed; without one, maxActiveKeysOf gives its default.
      ...(row.max_active_keys === null ? {} : { maxActiveKeys: Number(row.max_active_keys) }),
    },
    createdAt: new Date(Number(row.created_at)),
    disabledAt: row.disabled_at === null ? null : new Date(Number(row.disabled_at)),
  };
}

export function planColumns(plan: Partial<Plan>): Partial<Pick<AccountRow, 'monthly_allowance_mj' | 'hosted_entitlement' | 'enterprise' | 'max_active_keys'>> {
  const columns: Partial<Pick<AccountRow, 'monthly_allowance_mj' | 'hosted_entitlement' | 'enterprise' | 'max_active_keys'>> = {};
  if (plan.monthlyJouleAllowance !== undefined) columns.monthly_allowance_mj = toMillijoules(plan.monthlyJouleAllowance, 'monthlyJouleAllowance');
  if (plan.hostedEntitlement !== undefined) columns.hosted_entitlement = plan.hostedEntitlement ? 1 : 0;
  if (plan.enterprise !== undefined) columns.enterprise = plan.enterprise ? 1 : 0;
  // null puts the plan back on its default cap; undefined leaves it as it is.
  if (plan.maxActiveKeys !== undefined) columns.max_active_keys = plan.maxActiveKeys === null ? null : maxActiveKeysColumn(plan.maxActiveKeys);
  return columns;
}

export function maxActiveKeysColumn(value: number): number {
  if (!Number.isSafeInteger(value) || value < 0 || value > MAX_ACTIVE_KEYS_LIMIT) throw new RangeError(`maxActiveKeys must be an integer from 0 to ${MAX_ACTIVE_KEYS_LIMIT}`);
  return value;
}
