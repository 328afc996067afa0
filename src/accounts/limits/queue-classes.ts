/**
 * The queue classes a hosted request runs in, one per execution policy (route-vocabulary.ts
 * maps policies to them). The rate limits are set per queue class, so the name lives here,
 * below the hosted face that chooses the class.
 */
export const QUEUE_CLASSES = ['interactive', 'deep', 'enterprise'] as const;
export type QueueClass = (typeof QUEUE_CLASSES)[number];
