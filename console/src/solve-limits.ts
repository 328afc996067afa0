/**
 * Limits of the solve API the console must respect when it adds to a user's problem (the
 * classification grid). The daemon's schemas (src/quantum/solve-schemas.ts) hold the real ones;
 * importing them would bundle zod into the page, so they are repeated here and a test
 * (test/console/solve-limits.test.ts) checks they agree.
 */

/** `classificationProblemSchema`'s `predict` maximum. */
export const PREDICT_MAX = 5000;
/** Largest magnitude of a feature value (`MAX_MAGNITUDE`). */
export const MAX_MAGNITUDE = 1e12;
