/** An account's Joules for one month: what the plan grants, what is used, what is left. */
export interface Allowance {
  /** `YYYY-MM`, UTC. */
  month: string;
  allowanceJoules: number;
  usedJoules: number;
  /** Never below 0. */
  remainingJoules: number;
}
