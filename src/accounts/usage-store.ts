import type { Allowance } from './allowance.ts';
import type { SvcRoute } from './svc-route.ts';

export interface UsageQuery {
  accountId: string;
  /** The key the report is asked with: its own request counts and evidence (none: a signed-in session's report, `key` left out). */
  keyId?: string | undefined;
  /** `YYYY-MM`, UTC; default the current month. */
  month?: string | undefined;
  /** Most evidence rows to list per key and per project (newest first). */
  evidenceLimit?: number | undefined;
  /** Most ledger entries of the whole account to return in `recent`, newest first (default 0). */
  recentLimit?: number | undefined;
  /** Also total every key of the account (`keys`, a signed-in session's report); default false, `keys` left empty. */
  perKey?: boolean | undefined;
}

/**
 * One of the account's newest ledger rows as a usage report lists it: the evidence id and its
 * Joules (what the contract's usage report carries) and the route's facts that are not billing
 * figures. No tokens, outcome, estimated or measured Joules, or signatures: the contract keeps
 * route-evidence-linked billing events out of usage (`GET /evidence/:id` is where they are).
 */
export interface RecentEvidence {
  evidenceId: string;
  createdAt: Date;
  keyId: string;
  projectId: string | null;
  /** The row's billable Joules, as in the key's and the projects' evidence lists. */
  joules: number;
  route: Pick<SvcRoute, 'policy' | 'execution_plane' | 'privacy_tier' | 'model' | 'provider' | 'latency_ms' | 'fallback' | 'fallback_reason'>;
}

/** Requests and the tokens they used (prompt and completion, summed over the ledger rows). */
export interface UsageCounts {
  requests: number;
  promptTokens: number;
  completionTokens: number;
}

/** Most projects a usage report lists (the heaviest first). */
export const MAX_USAGE_PROJECTS = 100;

export interface UsageReport {
  month: string;
  allowance: Allowance;
  /** One entry per UTC day of the month that has usage, in order. */
  daily: ({ date: string; joules: number } & UsageCounts)[];
  /** Absent when the query named no key. */
  key?: ({ keyId: string; joules: number; evidence: { evidenceId: string; joules: number; createdAt: Date }[] } & UsageCounts) | undefined;
  /** With `perKey`: every key of the account with usage this month, the most Joules first, at most MAX_USAGE_PROJECTS of them; else empty. */
  keys: ({ keyId: string; joules: number } & UsageCounts)[];
  /** More keys had usage than `keys` lists. */
  keysTruncated: boolean;
  /** The account's newest ledger entries this month (`recentLimit` of them). */
  recent: RecentEvidence[];
  /** The projects with the most Joules this month, at most MAX_USAGE_PROJECTS of them (project ids come from a request header, so they are unbounded). */
  projects: ({ projectId: string; joules: number; evidence: { evidenceId: string; joules: number; createdAt: Date }[] } & UsageCounts)[];
  /** More projects had usage than `projects` lists. */
  projectsTruncated: boolean;
}

/** Reports over the ledger: the month's usage by day, key and project, and an audit total. */
export interface UsageStore {
  usage(query: UsageQuery): Promise<UsageReport>;
  /** Sum of every ledger row of an account in a month, from the rows themselves (audits and tests). */
  ledgerTotal(accountId: string, month: string): Promise<{ joules: number; rows: number }>;
}
