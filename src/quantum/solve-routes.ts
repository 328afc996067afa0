import type { FastifyInstance } from 'fastify';
import type { SolveService } from './solve-service.ts';

/**
 * `POST /solve` and `POST /solve/batch` as a Fastify plugin: the daemon registers it with
 * prefix `/api`, and the hosted tier can mount the same plugin behind its own hooks. Errors
 * are thrown as ApiError for the app's error handler (400 bad JSON comes from Fastify's parser).
 */
export interface SolveRoutesOptions {
  service: SolveService;
}

/** Room for a batch of 10 problems of 1 MB each plus the envelope; each problem is then checked on its own (413). */
export const SOLVE_BODY_LIMIT = 11 * 1024 * 1024;

export async function solveRoutes(app: FastifyInstance, opts: SolveRoutesOptions): Promise<void> {
  const { service } = opts;
  app.post('/solve', { bodyLimit: SOLVE_BODY_LIMIT }, async (request) => service.solve(request.body));
  app.post('/solve/batch', { bodyLimit: SOLVE_BODY_LIMIT }, async (request) => service.solveBatch(request.body));
}
