import type { FastifyInstance, FastifyRequest } from 'fastify';
import { INLINE_JSON_BYTES, parseJson, parseJsonBody } from '../shared/json-body.ts';
import { transferListOf, type OffThread } from '../shared/off-thread.ts';
import { ValidatedBody } from './request-body.ts';

/**
 * Most JSON values one body may hold: 300,000 is what OpenAI's embeddings endpoint takes at most
 * in one request (300k tokens) and far beyond any chat request. The checked request still comes
 * back to the event loop, by structured clone, in proportion to its values.
 */
export const MAX_BODY_VALUES = 300_000;

const INTAKE_MODULE = new URL('./openai-intake.ts', import.meta.url);

/**
 * The daemon's JSON body parser, replacing Fastify's: a body over INLINE_JSON_BYTES goes to the
 * intake worker, which bounds it (not nested too deep, not too many values), and for an OpenAI
 * route parses and validates it with the route's schema (request-body.ts); any other route gets
 * the checked bytes back to parse here. So a hostile 16 MB body never holds the event loop.
 * Routes that can use the large body where it is (the solve endpoints) install their own.
 */
export function installJsonBodyParser(app: FastifyInstance, intake: OffThread): void {
  const limits = { maxValues: MAX_BODY_VALUES };
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, async (request: FastifyRequest, body: Buffer) => {
    if (body.length <= INLINE_JSON_BYTES) return parseJsonBody(body, limits);
    const url = request.routeOptions.url ?? '';
    // The bytes travel to the worker (and back, when it returns them) without a copy.
    const result = await intake.run<{ validated: unknown } | Uint8Array>(INTAKE_MODULE, 'intakeOpenAIBody', [body, url, limits], transferListOf(body));
    if (!(result instanceof Uint8Array)) return new ValidatedBody(result.validated, url);
    return parseJson(result);
  });
}
