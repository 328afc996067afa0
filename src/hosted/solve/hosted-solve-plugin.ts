import type { FastifyRequest } from 'fastify';
import { PRIORITY, type SolveJobs } from '../../quantum/jobs/solve-jobs.ts';
import { solveJobsRoutes } from '../../quantum/jobs/solve-jobs-routes.ts';
import { solveRoutes } from '../../quantum/solve-routes.ts';
import type { Substrate } from '../../quantum/solve-schemas.ts';
import type { SolveService } from '../../quantum/solve-service.ts';
import type { HostedPlugin } from '../hosted-plugin.ts';
import { HostedError, hostedErrorBody } from '../hosted-error.ts';

export interface HostedSolveOptions {
  service: SolveService;
  /** `/api/solve/jobs`: mounted when given. */
  jobs?: SolveJobs;
  /** Aborted when the server drains: open job event streams end. */
  closing?: AbortSignal;
}

/** The `vendor-eagle` hardware substrate needs an enterprise plan (403 before the substrate is consulted). */
function enterpriseGuard(request: FastifyRequest, substrate: Substrate): void {
  if (substrate === 'vendor-eagle' && request.hostedIdentity?.account.plan.enterprise !== true) {
    throw new HostedError({
      status: 403, type: 'permission_error', code: 'enterprise_plan_required', param: 'substrate',
      message: "The 'vendor-eagle' hardware substrate needs an enterprise plan; this account has none. Use substrate 'local' (the simulator).",
    });
  }
}

/**
 * `POST /api/solve` and `POST /api/solve/batch` on the hosted tier: the local daemon's solve
 * plugin behind the key check. Any valid key may solve on the simulator; the `vendor-eagle`
 * hardware substrate needs an enterprise plan, refused (403) before the substrate is consulted.
 * It reads nothing of the store itself (`unknown`): the key check it mounts does.
 */
export function hostedSolvePlugin(options: HostedSolveOptions): HostedPlugin<unknown> {
  return async (scope, context) => {
    // onRequest, not preHandler: a caller without a valid key is refused before an 11 MB body is read.
    scope.addHook('onRequest', context.requireKey);
    await scope.register(solveRoutes, {
      service: options.service,
      // A failed batch item carries the hosted envelope's fields, like a failed single solve.
      itemError: (error) => hostedErrorBody(error).error,
      guard: enterpriseGuard,
    });
    const { jobs } = options;
    if (jobs === undefined) return;
    // A job belongs to the account whose key submitted it: any other key gets 404 for its id.
    // Rate-limited by the same key check as the synchronous calls (requireKey, above).
    await scope.register(solveJobsRoutes, {
      jobs,
      owner: (request) => request.hostedIdentity?.account.id ?? '\u0000',
      priority: (request) => (request.hostedIdentity?.account.plan.enterprise === true ? PRIORITY.enterprise : PRIORITY.standard),
      guard: enterpriseGuard,
      errorBody: (error) => hostedErrorBody(error).error,
      closing: options.closing,
    });
  };
}
