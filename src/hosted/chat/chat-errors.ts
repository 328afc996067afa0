import type { Allowance } from '../../accounts/allowance.ts';
import { HostedError } from '../hosted-error.ts';

/** The store did not answer: said before anything ran or was billed, so a retry is safe. */
export function ledgerUnavailable(): HostedError {
  return new HostedError({ status: 503, type: 'server_error', code: 'ledger_unavailable', message: 'The usage ledger is unavailable right now; nothing was run or billed. Retry later.', retryAfterSeconds: 1 });
}

export function allowanceExhausted(allowance: Allowance, why: string): HostedError {
  return new HostedError({
    status: 402, type: 'insufficient_quota', code: 'joule_allowance_exhausted',
    message: `This account's Joule allowance for ${allowance.month}: ${why} (${allowance.usedJoules} of ${allowance.allowanceJoules} J used); nothing was run.`,
  });
}

export function shuttingDown(): HostedError {
  return new HostedError({ status: 503, type: 'server_error', code: 'server_shutting_down', message: 'The server is shutting down: this generation was stopped and what ran is billed. Retry the request.', retryAfterSeconds: 1 });
}
