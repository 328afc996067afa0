import { ApiError } from '../../shared/api-error.ts';

/**
 * The hardware substrate's answers, in one place: 503 when it is not configured (the
 * contract's "hardware substrate unavailable"), 502 when the provider cannot be reached, refuses
 * our token, answers with an error or a result it cannot trust, or fails the job, 504 when a job
 * (`--quantum-timeout`) or the whole hardware solve (`--quantum-deadline`) does not finish in time,
 * 422 when the problem's circuit cannot go to hardware. Messages name the provider's origin and
 * status, never the token.
 */
export const hardwareErrors = {
  unavailable(missing: string): ApiError {
    return new ApiError({
      status: 503, type: 'server_error', code: 'substrate_unavailable', param: 'substrate',
      message: `The 'vendor-eagle' hardware substrate is unavailable on this runtime: ${missing}. Retry with substrate 'local' (the simulator).`,
    });
  },
  unreachable(origin: string, why: string): ApiError {
    return new ApiError({ status: 502, type: 'server_error', code: 'substrate_unreachable', param: 'substrate', message: `The hardware provider at ${origin} could not be reached (${why}).` });
  },
  authFailed(origin: string, status: number, tokenEnv: string): ApiError {
    return new ApiError({
      status: 502, type: 'server_error', code: 'substrate_auth_failed', param: 'substrate',
      message: `The hardware provider at ${origin} refused this runtime's credentials (HTTP ${status}); the operator should check ${tokenEnv}.`,
    });
  },
  providerError(origin: string, status: number, detail: string): ApiError {
    return new ApiError({ status: 502, type: 'server_error', code: 'substrate_provider_error', param: 'substrate', message: `The hardware provider at ${origin} answered HTTP ${status}${detail === '' ? '' : `: ${detail}`}.` });
  },
  malformed(origin: string, what: string): ApiError {
    return new ApiError({ status: 502, type: 'server_error', code: 'substrate_provider_error', param: 'substrate', message: `The hardware provider at ${origin} sent ${what}.` });
  },
  jobFailed(jobId: string, status: string, reason: string): ApiError {
    return new ApiError({
      status: 502, type: 'server_error', code: 'substrate_job_failed', param: 'substrate',
      message: `Hardware job ${jobId} ended ${status}${reason === '' ? '' : `: ${reason}`}.`,
    });
  },
  /** One provider job past `--quantum-timeout` (submit, provider queue, run, results). */
  timeout(jobId: string | undefined, ms: number, lastStatus: string | undefined): ApiError {
    return new ApiError({
      status: 504, type: 'server_error', code: 'substrate_timeout', param: 'substrate',
      message: `The hardware job${jobId === undefined ? '' : ` ${jobId}`} did not finish within ${spell(ms)} (--quantum-timeout)${lastStatus === undefined ? '' : `; last status: ${lastStatus}`}${jobId === undefined ? '' : '; svc asked the provider to cancel it'}. Retry later or with substrate 'local'.`,
    });
  },
  /**
   * A hardware solve (or batch item) past its overall deadline (`--quantum-deadline`), counted
   * from when it entered the hardware lane; `where` says what it was doing then.
   */
  deadline(ms: number, where: string): ApiError {
    return new ApiError({
      status: 504, type: 'server_error', code: 'substrate_timeout', param: 'substrate',
      message: `The hardware solve did not finish within its deadline of ${spell(ms)} (--quantum-deadline): ${where}. Retry later or with substrate 'local'.`,
    });
  },
  notTranspilable(why: string): ApiError {
    return ApiError.unprocessable(`This problem's circuit cannot run on the 'vendor-eagle' substrate: ${why}.`, 'substrate', 'circuit_not_transpilable');
  },
  unsupported(solver: string, type: string): ApiError {
    return ApiError.unprocessable(
      `'${solver}' / '${type}' runs on the local simulator only: it estimates from many small circuits, which the hardware substrate does not submit. Use substrate 'local'.`,
      'substrate',
      'substrate_unsupported',
    );
  },
};

/** A duration for a message: `400 ms`, `20 s`, `10 min`, `1.5 h`. */
export function spell(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 120_000) return `${Number((ms / 1000).toFixed(1))} s`;
  if (ms < 7_200_000) return `${Number((ms / 60_000).toFixed(1))} min`;
  return `${Number((ms / 3_600_000).toFixed(1))} h`;
}
