import type { FastifyInstance, FastifyRequest } from 'fastify';
import { parseWithSchema } from '../../shared/parse-with-schema.ts';
import { nodeHeartbeatSchema, type NodeHeartbeatReply } from './node-heartbeat.ts';
import type { NodeRegistry } from './node-registry.ts';
import { NodeTokenError, NodesUnavailableError } from './node-token-error.ts';
import type { NodeTokens } from './node-tokens.ts';

export interface NodeRoutesOptions {
  tokens: NodeTokens;
  registry: NodeRegistry;
  /** A node that has not beaten for this long is dropped. */
  ttlMs: number;
  /** How often nodes are told to beat (a third of the TTL: two lost beats in a row do not drop a node). */
  heartbeatMs: number;
  /** Told when a node joins (first beat after it was absent) or leaves; only its id and URL, never a token. */
  onChange?: ((event: 'joined' | 'left', nodeId: string, url?: string) => void) | undefined;
}

function nodeOf(request: FastifyRequest, tokens: NodeTokens): string {
  const header = request.headers.authorization;
  const match = typeof header === 'string' && header.length <= 512 ? /^bearer +(\S+)$/i.exec(header) : null;
  const node = match === null ? undefined : tokens.nodeFor(match[1]!);
  if (node === undefined) throw new NodeTokenError();
  return node;
}

/**
 * `POST /api/nodes/heartbeat` (register or renew) and `DELETE /api/nodes/heartbeat` (leave now),
 * both with the node's token. Nothing else of the hosted API takes a node token, and a node token
 * is not an API key: it cannot chat, read usage or manage keys.
 */
export function nodeRoutes(options: NodeRoutesOptions) {
  return async (api: FastifyInstance): Promise<void> => {
    // The token is checked before the body is read, so a caller without one costs no parsing.
    api.post('/nodes/heartbeat', { onRequest: async (request) => { nodeOf(request, options.tokens); } }, async (request): Promise<NodeHeartbeatReply> => {
      const id = nodeOf(request, options.tokens);
      const heartbeat = parseWithSchema(nodeHeartbeatSchema, request.body);
      let known: boolean;
      try {
        known = (await options.registry.live()).some((n) => n.id === id);
        await options.registry.put({ id, heartbeat, expiresAt: Date.now() + options.ttlMs });
      } catch (error) {
        throw new NodesUnavailableError('The node registry (Redis) cannot be reached; the heartbeat was not recorded.', error);
      }
      if (!known) options.onChange?.('joined', id, heartbeat.advertise_url);
      return { node_id: id, ttl_ms: options.ttlMs, heartbeat_ms: options.heartbeatMs };
    });
    api.delete('/nodes/heartbeat', async (request, reply) => {
      const id = nodeOf(request, options.tokens);
      try {
        await options.registry.remove(id);
      } catch (error) {
        throw new NodesUnavailableError('The node registry (Redis) cannot be reached; the node stays registered until its heartbeat expires.', error);
      }
      options.onChange?.('left', id);
      return reply.status(204).send();
    });
  };
}
