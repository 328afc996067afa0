import { Redis } from 'ioredis';
import { z } from 'zod';
import { nodeHeartbeatSchema } from './node-heartbeat.ts';
import type { NodeRecord, NodeRegistry } from './node-registry.ts';

const recordSchema = z.object({ id: z.string(), heartbeat: nodeHeartbeatSchema, expiresAt: z.number() });

/**
 * Registrations in Redis, shared by every gateway replica on it: each node is one key that expires
 * with its registration (`PX`), and one set lists the ids so a replica need not SCAN. Ids whose key
 * has expired are taken out of the set when found. The keys start with `<prefix>nodes:` (the
 * replicas' --redis-key-prefix), so deployments sharing a Redis keep their nodes apart.
 */
export class RedisNodeRegistry implements NodeRegistry {
  readonly kind = 'redis';
  readonly #redis: Redis;
  readonly #prefix: string;

  private constructor(redis: Redis, prefix: string) {
    this.#redis = redis;
    this.#prefix = `${prefix}nodes:`;
  }

  /**
   * Connects within a few seconds. An unreachable Redis does not stop the gateway (as with the
   * rate limiter): ioredis keeps reconnecting, heartbeats answer 503 and chat falls past the
   * `nodes` backend until it is back.
   */
  static async open(url: string, prefix: string): Promise<RedisNodeRegistry> {
    const redis = new Redis(url, { lazyConnect: true, connectTimeout: 3000, commandTimeout: 2000, enableOfflineQueue: false, maxRetriesPerRequest: 0, retryStrategy: (times: number) => Math.min(100 * times, 2000) });
    // Errors surface on the commands that fail; the listener keeps ioredis from treating them as unhandled.
    redis.on('error', () => {});
    await redis.connect().catch(() => {});
    return new RedisNodeRegistry(redis, prefix);
  }

  #key(id: string): string {
    return `${this.#prefix}node:${id}`;
  }

  async put(record: NodeRecord): Promise<void> {
    const ttl = Math.max(1, record.expiresAt - Date.now());
    await this.#redis.multi().set(this.#key(record.id), JSON.stringify(record), 'PX', ttl).sadd(`${this.#prefix}ids`, record.id).exec();
  }

  async remove(id: string): Promise<void> {
    await this.#redis.multi().del(this.#key(id)).srem(`${this.#prefix}ids`, id).exec();
  }

  async live(now = Date.now()): Promise<NodeRecord[]> {
    const ids = await this.#redis.smembers(`${this.#prefix}ids`);
    if (ids.length === 0) return [];
    const values = await this.#redis.mget(ids.map((id) => this.#key(id)));
    const live: NodeRecord[] = [];
    const gone: string[] = [];
    values.forEach((value, i) => {
      let json: unknown;
      try {
        json = value === null ? undefined : JSON.parse(value);
      } catch {
        json = undefined;
      }
      // Something else under our prefix is no registration: skipped, not trusted.
      const parsed = value === null ? undefined : recordSchema.safeParse(json);
      if (parsed?.success === true && parsed.data.expiresAt > now) live.push(parsed.data);
      else if (value === null) gone.push(ids[i]!);
    });
    if (gone.length > 0) await this.#redis.srem(`${this.#prefix}ids`, ...gone);
    return live;
  }

  async close(): Promise<void> {
    this.#redis.disconnect();
  }
}
