import type { Allowance } from '../allowance.ts';
import { toJoules } from './energy-units.ts';

/** The month's allowance as the store reports it, from its millijoule figures; what remains is never below 0. */
export function allowanceOf(month: string, allowanceMj: number, usedMj: number): Allowance {
  return {
    month,
    allowanceJoules: toJoules(allowanceMj),
    usedJoules: toJoules(usedMj),
    remainingJoules: toJoules(Math.max(0, allowanceMj - usedMj)),
  };
}

/** The millijoule figures an allowance was made from, for the account it was read for. */
export interface AllowanceFigures {
  accountId: string;
  allowanceMj: number;
  usedMj: number;
}
