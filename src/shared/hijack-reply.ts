import type { ServerResponse } from 'node:http';
import type { FastifyReply } from 'fastify';

/**
 * Takes a reply over for writing by hand (a stream of events), keeping the headers that hooks
 * and the handler set on it so far: Fastify writes them only when it sends the reply itself, so a
 * bare hijack would lose the CORS headers, the request id and the like. The caller writes the head.
 */
export function hijackReply(reply: FastifyReply): ServerResponse {
  const headers = reply.getHeaders();
  reply.hijack();
  const raw = reply.raw;
  for (const [name, value] of Object.entries(headers)) if (value !== undefined) raw.setHeader(name, value);
  return raw;
}
