/**
 * The hosted tier's fixed vocabulary: execution policies, the queue classes they run in, and
 * privacy tiers. The queue classes themselves are named in accounts/limits/queue-classes.ts,
 * below this face, because the rate limits are set per class.
 *
 * Policy strings: `supercomputer-fast` and `supercomputer-deep` (the contract's), and
 * `enterprise-private` and `enterprise-byo` (the contract leaves these strings to us).
 */
export const POLICIES = ['supercomputer-fast', 'supercomputer-deep', 'enterprise-private', 'enterprise-byo'] as const;
export type Policy = (typeof POLICIES)[number];
export const PRIVACY_TIERS = ['mesh_safe', 'personal'] as const;
export type PrivacyTier = (typeof PRIVACY_TIERS)[number];
