import type { NodeHeartbeat } from './node-heartbeat.ts';

/** A live inference node as the gateway knows it. */
export interface NodeRecord {
  /** The name of the node's token. */
  id: string;
  heartbeat: NodeHeartbeat;
  /** Epoch ms: dropped after this unless it beats again. */
  expiresAt: number;
}

/**
 * Where registrations live: this process's memory on one machine, Redis when replicas share one
 * (redis-node-registry.ts), so a heartbeat that reaches any replica registers the node for all.
 * A registration is short-lived state (it expires on its own), so it never touches the store.
 */
export interface NodeRegistry {
  readonly kind: 'memory' | 'redis';
  put(record: NodeRecord): Promise<void>;
  remove(id: string): Promise<void>;
  /** The registrations not expired at `now`. */
  live(now?: number): Promise<NodeRecord[]>;
  close(): Promise<void>;
}

export class MemoryNodeRegistry implements NodeRegistry {
  readonly kind = 'memory';
  readonly #nodes = new Map<string, NodeRecord>();

  async put(record: NodeRecord): Promise<void> {
    this.#nodes.set(record.id, record);
  }

  async remove(id: string): Promise<void> {
    this.#nodes.delete(id);
  }

  async live(now = Date.now()): Promise<NodeRecord[]> {
    const live: NodeRecord[] = [];
    for (const [id, record] of this.#nodes) {
      if (record.expiresAt > now) live.push(record);
      else this.#nodes.delete(id);
    }
    return live;
  }

  async close(): Promise<void> {
    this.#nodes.clear();
  }
}
