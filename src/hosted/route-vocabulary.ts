/**
 * The hosted tier's fixed vocabulary: execution policies, the queue classes they run in, and
 * privacy tiers. Kept apart from the route configuration's schema so that the pieces that
 * configuration embeds (the rate limits) can name queue classes without an import cycle.
 *
 * Policy strings: `supercomputer-fast` and `supercomputer-deep` (the contract's), and
 * `enterprise-private` and `enterprise-byo` (the contract leaves these strings to us).
 */
export const POLICIES = ['supercomputer-fast', 'supercomputer-deep', 'enterprise-private', 'enterprise-byo'] as const;
export type Policy = (typeof POLICIES)[number];
export const QUEUE_CLASSES = ['interactive', 'deep', 'enterprise'] as const;
export type QueueClass = (typeof QUEUE_CLASSES)[number];
export const PRIVACY_TIERS = ['mesh_safe', 'personal'] as const;
export type PrivacyTier = (typeof PRIVACY_TIERS)[number];
