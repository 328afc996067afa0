import type { FastifyInstance, FastifyRequest } from 'fastify';
import { INLINE_JSON_BYTES, parseJson, parseJsonBody } from '../shared/json-body.ts';
import { transferListOf, type OffThread } from '../shared/off-thread.ts';

/**
 * Most JSON values one OpenAI-route body may hold. The parsed body comes back to the event loop,
 * where parsing costs in proportion to its values; 300,000 is what OpenAI's embeddings endpoint
 * takes at most in one request (300k tokens) and far beyond any chat request.
 */
export const MAX_BODY_VALUES = 300_000;

const JSON_BODY_MODULE = new URL('../shared/json-body.ts', import.meta.url);

/**
 * The daemon's JSON body parser, replacing Fastify's: a body over INLINE_JSON_BYTES is first
 * scanned on the intake worker (not nested too deep, not too many values), so a hostile 16 MB
 * body never holds the event loop; only a body whose parse is known to be cheap is parsed here.
 * Routes that can use the large body where it is (the solve endpoints) install their own.
 */
export function installJsonBodyParser(app: FastifyInstance, intake: OffThread): void {
  const limits = { maxValues: MAX_BODY_VALUES };
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, async (_request: FastifyRequest, body: Buffer) => {
    if (body.length <= INLINE_JSON_BYTES) return parseJsonBody(body, limits);
    // The bytes travel to the worker and back without a copy when the Buffer owns its memory.
    const checked = await intake.run<Uint8Array>(JSON_BODY_MODULE, 'checkJsonBody', [body, limits], transferListOf(body));
    return parseJson(Buffer.from(checked.buffer, checked.byteOffset, checked.byteLength).toString('utf8'));
  });
}
