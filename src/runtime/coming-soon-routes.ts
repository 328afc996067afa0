import type { FastifyInstance } from 'fastify';
import { ApiError } from '../shared/api-error.ts';
import { sendApiError } from '../http/openai-error-handler.ts';

const COMING_IN_V1_1: Record<string, string> = {
  '/images/generations': 'Image generation',
  '/audio/transcriptions': 'Audio transcription',
};

/**
 * Endpoints the contract marks "coming in V1.1": a 501 in the usual envelope, answered before
 * the body is read so a large upload (audio is multipart) is not parsed for nothing.
 */
export async function comingSoonRoutes(app: FastifyInstance): Promise<void> {
  for (const [path, what] of Object.entries(COMING_IN_V1_1)) {
    app.post(path, {
      onRequest: async (_request, reply) => {
        const error = new ApiError({
          status: 501, type: 'not_implemented_error', code: 'coming_in_v1_1',
          message: `${what} (POST /v1${path}) arrives in svc V1.1; this build does not offer it yet.`,
        });
        reply.header('connection', 'close');
        return sendApiError(reply, error);
      },
      handler: async () => undefined,
    });
  }
}
