import type { FastifyInstance, FastifyRequest } from 'fastify';

/** Reports what is true right now (each face of the daemon contributes its fields), some of it (the transport) about the connection the request came on. */
export type HealthReporter = (request: FastifyRequest) => Record<string, unknown> | Promise<Record<string, unknown>>;

export async function healthRoute(app: FastifyInstance, options: { report: HealthReporter }): Promise<void> {
  app.get('/health', async (request, reply) => {
    reply.header('cache-control', 'no-store');
    return { status: 'ok', ...(await options.report(request)) };
  });
}
