import type { FastifyInstance, FastifyRequest } from 'fastify';

declare module 'fastify' {
  interface FastifyRequest {
    /** The model a request used, for the request log line. */
    model: string | undefined;
    /** What a generation produced (token counts and how it ended), for the log line. */
    generation: { completionTokens: number; finish: string } | undefined;
  }
}

/** 499: the client closed the connection before the response was complete (nginx's convention). */
export const CLIENT_CLOSED_REQUEST = 499;

/**
 * One structured line per request: method, path (no query string), status, duration, the
 * model and what it generated. Bodies, prompts and outputs are never logged at the default level.
 */
export function logRequest(request: FastifyRequest, status: number, ms: number): void {
  request.log.info(
    {
      method: request.method,
      path: request.url.split('?')[0],
      status,
      ms: Math.round(ms),
      // The developer key's id and account, never its secret (developer-key-guard.ts).
      ...(request.developerKey !== undefined
        ? { key_id: request.developerKey.keyId, account_id: request.developerKey.accountId, project: request.developerKey.project }
        : {}),
      ...(request.model !== undefined ? { model: request.model } : {}),
      ...(request.generation !== undefined
        ? { completion_tokens: request.generation.completionTokens, finish: request.generation.finish }
        : {}),
    },
    'request',
  );
}

export function installRequestLog(app: FastifyInstance): void {
  app.decorateRequest('model', undefined);
  app.decorateRequest('generation', undefined);
  app.decorateRequest('developerKey', undefined);
  // Fastify runs onResponse only for responses that completed; a request whose client went
  // away is logged by whoever notices (see generation-run.ts) with status 499.
  app.addHook('onResponse', async (request, reply) => {
    logRequest(request, reply.statusCode, reply.elapsedTime);
  });
}
