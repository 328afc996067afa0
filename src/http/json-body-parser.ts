import type { FastifyInstance, FastifyRequest } from 'fastify';
import { INLINE_JSON_BYTES, parseJsonBody } from '../shared/json-body.ts';
import { transferListOf, type OffThread } from '../shared/off-thread.ts';
import { ValidatedBody } from './validated-body.ts';

/**
 * Most JSON values one body may hold: 300,000 is what OpenAI's embeddings endpoint takes at most
 * in one request (300k tokens) and far beyond any chat request. The checked request still comes
 * back to the event loop, by structured clone, in proportion to its values.
 */
export const MAX_BODY_VALUES = 300_000;

/**
 * Most objects and arrays one body may hold. A checked body reaches the event loop as a structured
 * clone, whose cost grows with its objects far more than with its numbers or string bytes
 * (measured on the 2-core machine, idle: 300,000 integers 7 ms, 100,000 two-field objects 37 ms,
 * 16 MB of strings 12 ms); at 20,000 the clone stays near 10 ms even on a loaded machine. Far
 * beyond any chat request (messages, content parts, tools) or embeddings batch (2,048 inputs).
 */
export const MAX_BODY_CONTAINERS = 20_000;

/**
 * The module the intake worker runs for a large body, and its function: `(bytes, routeUrl,
 * limits)` → `{ validated }` when it knows the route's schema, else `{ parsed }`. The OpenAI
 * contract's is openai/openai-intake.ts.
 */
export interface BodyIntake {
  module: URL;
  fn: string;
}

/**
 * The daemon's JSON body parser, replacing Fastify's: a body over INLINE_JSON_BYTES goes to the
 * intake worker, which bounds it (not nested too deep, not too many values, objects and arrays),
 * parses it and, for a route `intake` knows, validates it with the route's schema (request-body.ts);
 * the event loop gets the value back as a structured clone, whose cost those bounds keep small.
 * So a hostile 16 MB body never holds the event loop. Routes that can use the large body where
 * it is (the solve endpoints) install their own.
 */
export function installJsonBodyParser(app: FastifyInstance, offThread: OffThread, intake: BodyIntake): void {
  const limits = { maxValues: MAX_BODY_VALUES, maxContainers: MAX_BODY_CONTAINERS };
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, async (request: FastifyRequest, body: Buffer) => {
    if (body.length <= INLINE_JSON_BYTES) return parseJsonBody(body, limits);
    const url = request.routeOptions.url ?? '';
    // The bytes travel to the worker without a copy.
    const result = await offThread.run<{ validated: unknown } | { parsed: unknown }>(intake.module, intake.fn, [body, url, limits], transferListOf(body));
    return 'validated' in result ? new ValidatedBody(result.validated, url) : result.parsed;
  });
}
