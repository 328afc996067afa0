import { z } from 'zod';

/**
 * What an inference node sends the gateway (`POST /api/nodes/heartbeat`, every few seconds): where
 * the gateway reaches it, the token the gateway must present there, its models and its load. The
 * first heartbeat registers the node; each one renews it for the gateway's `--node-ttl`. The same
 * schema is used by the node that writes it (src/runtime/node/node-agent.ts) and the gateway that
 * reads it, so the two cannot drift.
 */
export const ENERGY_SOURCES = ['nvml', 'counter-file'] as const;

const httpUrl = z.string().max(2048).refine((value) => {
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.username === '' && url.password === '' && url.search === '' && url.hash === '';
  } catch {
    return false;
  }
}, 'an http(s) URL without credentials, query or fragment');

export const nodeHeartbeatSchema = z.strictObject({
  /** Where the gateway sends this node's requests (the node's --advertise-url). */
  advertise_url: httpUrl,
  /** The secret the gateway presents to the node (Authorization: Bearer); new each time the node starts. */
  call_token: z.string().regex(/^[A-Za-z0-9_-]{32,256}$/, '32 to 256 URL-safe characters'),
  /** The models the node's daemon serves (its own ids). */
  models: z.array(z.strictObject({ id: z.string().min(1).max(512) })).max(1000),
  load: z.strictObject({
    /** Requests generating now. */
    active: z.int().min(0).max(1_000_000),
    /** Requests waiting for a sequence. */
    waiting: z.int().min(0).max(1_000_000),
    /** Requests the node generates at once (its --parallel). */
    slots: z.int().min(1).max(1_000_000),
  }),
  /** Where the node's measured Joules come from, or null when it measures none. */
  energy_source: z.enum(ENERGY_SOURCES).nullable(),
});
export type NodeHeartbeat = z.infer<typeof nodeHeartbeatSchema>;

/** The gateway's answer: the node's id (its token's name) and how often to beat. */
export const nodeHeartbeatReplySchema = z.object({
  node_id: z.string(),
  ttl_ms: z.int().positive(),
  heartbeat_ms: z.int().positive(),
});
export type NodeHeartbeatReply = z.infer<typeof nodeHeartbeatReplySchema>;

/** The node's path for its measured Joules of one request, by the id the gateway sent (x-svc-node-request-id). */
export const NODE_ENERGY_PATH = '/svc-node/v1/energy';
/** The header naming a request so its energy can be asked for afterwards. */
export const NODE_REQUEST_ID_HEADER = 'x-svc-node-request-id';

export const nodeEnergyReplySchema = z.object({ raw_joules: z.number().nonnegative().nullable() });
