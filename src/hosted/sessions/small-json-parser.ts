import type { FastifyInstance, FastifyRequest } from 'fastify';
import { MAX_BODY_VALUES } from '../../http/json-body-parser.ts';
import { INLINE_JSON_BYTES, parseJsonBody } from '../../shared/json-body.ts';

/**
 * The JSON parser of the session and key routes, in their plugin scope only. Their bodies are a
 * few short fields, so they are parsed here on the event loop with the app parser's rules and
 * bounded to INLINE_JSON_BYTES (413 `request_too_large` past it). A DELETE whose JSON body is
 * empty (`Content-Type: application/json` with `Content-Length: 0`, as clients that set the type
 * on every request send) has no body, rather than a malformed one: the route reads `?id=`.
 */
export function installSmallJsonParser(scope: FastifyInstance): void {
  scope.removeContentTypeParser('application/json');
  scope.addContentTypeParser('application/json', { parseAs: 'buffer', bodyLimit: INLINE_JSON_BYTES }, async (request: FastifyRequest, body: Buffer) =>
    request.method === 'DELETE' && body.length === 0 ? undefined : parseJsonBody(body, { maxValues: MAX_BODY_VALUES }));
}
