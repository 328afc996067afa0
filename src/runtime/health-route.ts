import type { FastifyInstance } from 'fastify';

/** Reports what is true right now; each face of the daemon contributes its fields. */
export type HealthReporter = () => Record<string, unknown> | Promise<Record<string, unknown>>;

export async function healthRoute(app: FastifyInstance, options: { report: HealthReporter }): Promise<void> {
  app.get('/health', async (_request, reply) => {
    reply.header('cache-control', 'no-store');
    return { status: 'ok', ...(await options.report()) };
  });
}
