import type { FastifyContextConfig, FastifyInstance, FastifyRequest } from 'fastify';
import { NO_JOB_LOG, type JobKind, type JobLog } from '../shared/job-log.ts';
import { toApiError } from './openai-error-handler.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** The model a request used, for the request log line. */
    model: string | undefined;
    /** The solver a solve request named, once its body was read (for the log line and the job log). */
    solver: string | undefined;
    /** What a generation produced (token counts and how it ended), for the log line. */
    generation: { completionTokens: number; finish: string } | undefined;
    /**
     * Why the job went wrong, for the job log: the code it failed with, or a failure class the
     * route noted while still answering (`answered`: retrieval_unavailable).
     */
    failure: { type: string; answered: boolean } | undefined;
    /**
     * Set by the loopback and developer-key guards when they refuse a request: it never reached
     * its route, so it is not a job (a page probing the port must not raise the daily count).
     */
    refusedByGuard: boolean;
  }
  interface FastifyInstance {
    /** Where finished jobs are recorded (src/telemetry's file in the daemon; nowhere elsewhere). */
    jobLog: JobLog;
  }
  interface FastifyContextConfig {
    /** Marks a route whose requests are jobs in the job log (docs/telemetry.md). */
    job?: JobKind;
  }
}

/** 499: the client closed the connection before the response was complete (nginx's convention). */
export const CLIENT_CLOSED_REQUEST = 499;

/**
 * One structured line per request: method, path (no query string), status, duration, the
 * model and what it generated. Bodies, prompts and outputs are never logged at the default level.
 */
export function logRequest(request: FastifyRequest, status: number, ms: number): void {
  // The line is built only when it will be written (a busy gateway runs at warn).
  if ((request.log as { isLevelEnabled?: (level: string) => boolean }).isLevelEnabled?.('info') !== false) writeRequestLine(request, status, ms);
  recordJob(request, status, ms);
}

function writeRequestLine(request: FastifyRequest, status: number, ms: number): void {
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
      ...(request.solver !== undefined ? { solver: request.solver } : {}),
      ...(request.generation !== undefined
        ? { completion_tokens: request.generation.completionTokens, finish: request.generation.finish }
        : {}),
    },
    'request',
  );
}

/** A request to a job route, as a line of the job log: what ran, how long, how it ended. */
function recordJob(request: FastifyRequest, status: number, ms: number): void {
  // No route (a 404, a URL Fastify could not route) has no config at all.
  const config = request.routeOptions.config as Partial<FastifyContextConfig> | undefined;
  const kind = config?.job;
  if (kind === undefined || request.refusedByGuard) return;
  const failure = request.failure;
  request.server.jobLog.record({
    kind,
    name: request.model ?? request.solver ?? null,
    durationMs: ms,
    outcome: status === CLIENT_CLOSED_REQUEST ? 'cancelled' : status >= 400 || failure?.answered === false ? 'failed' : 'completed',
    errorType: failure?.type ?? (status >= 400 ? `http_${status}` : null),
  });
}

/** Notes what a request failed with, for the job log (the error handler answers it). */
export function noteFailure(request: FastifyRequest, error: unknown): void {
  request.failure = { type: toApiError(error).code, answered: false };
}

/** `jobLog`: where requests to job routes are recorded; none, nowhere. */
export function installRequestLog(app: FastifyInstance, jobLog: JobLog = NO_JOB_LOG): void {
  app.decorateRequest('model', undefined);
  app.decorateRequest('solver', undefined);
  app.decorateRequest('generation', undefined);
  app.decorateRequest('failure', undefined);
  app.decorateRequest('refusedByGuard', false);
  app.decorateRequest('developerKey', undefined);
  app.decorate('jobLog', jobLog);
  app.addHook('onError', async (request, _reply, error) => noteFailure(request, error));
  // Fastify runs onResponse only for responses that completed; a request whose client went
  // away is logged by whoever notices (see generation-run.ts) with status 499.
  app.addHook('onResponse', async (request, reply) => {
    logRequest(request, reply.statusCode, reply.elapsedTime);
  });
}
