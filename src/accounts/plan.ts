/** An account's plan: its monthly Joules, its entitlements, and the cap on its active keys. */
export interface Plan {
  /** Joules of hosted compute per calendar month (UTC). */
  monthlyJouleAllowance: number;
  /** Paid hosted-compute entitlement: `supercomputer` keys and hosted chat need it. */
  hostedEntitlement: boolean;
  /** Enterprise plan: enterprise policies, the `/v1` fleet prefix, the hardware substrate. */
  enterprise: boolean;
  /**
   * Most unrevoked keys the account may hold when it issues its own (`POST /api/keys`); absent
   * or null: the plan's default (`defaultMaxActiveKeys`). Read it through `maxActiveKeysOf`.
   */
  maxActiveKeys?: number | null | undefined;
}

/** Most keys a plan's cap may name: an integer column on both engines, and far past any real plan. */
export const MAX_ACTIVE_KEYS_LIMIT = 1_000_000;

/** Active-key caps when a plan names none: free accounts 10, paid 100, enterprise 1000. */
export const DEFAULT_MAX_ACTIVE_KEYS = { free: 10, entitled: 100, enterprise: 1000 } as const;

export function defaultMaxActiveKeys(plan: Pick<Plan, 'hostedEntitlement' | 'enterprise'>): number {
  if (plan.enterprise) return DEFAULT_MAX_ACTIVE_KEYS.enterprise;
  return plan.hostedEntitlement ? DEFAULT_MAX_ACTIVE_KEYS.entitled : DEFAULT_MAX_ACTIVE_KEYS.free;
}

/** The cap on unrevoked keys that holds for this plan: its own, or its default. */
export function maxActiveKeysOf(plan: Plan): number {
  return plan.maxActiveKeys ?? defaultMaxActiveKeys(plan);
}
