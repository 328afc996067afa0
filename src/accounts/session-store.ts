import type { Account } from './account-store.ts';

export interface Session {
  id: string;
  accountId: string;
  createdAt: Date;
  expiresAt: Date;
}

/** Browser sign-in: one-time sign-in links, the sessions they open, and ending them. */
export interface SessionStore {
  /** A one-time sign-in token for an account (the admin CLI prints it as a link). */
  createSignInToken(accountId: string, ttlMs: number): Promise<{ token: string; expiresAt: Date }>;
  /** Redeems a sign-in token once: a new session and its secret token, or undefined. */
  redeemSignInToken(token: string, sessionTtlMs: number): Promise<{ session: Session; token: string } | undefined>;
  checkSession(token: string): Promise<{ session: Session; account: Account } | undefined>;
  endSession(token: string): Promise<void>;
  /** Ends every session of the account and voids its unused sign-in links; how many of each. */
  revokeSessions(accountId: string): Promise<{ sessions: number; signInLinks: number }>;
}
