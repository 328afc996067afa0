import { randomUUID } from 'node:crypto';
import type { ChatMessage, ChatOptions, GenerateResult } from '../../inference/language-model.ts';
import { OpenAIUpstream } from '../../inference/openai-upstream.ts';
import { ApiError } from '../../shared/api-error.ts';
import { Secret } from '../../shared/secret.ts';
import { NODE_ENERGY_PATH, NODE_REQUEST_ID_HEADER, nodeEnergyReplySchema } from './node-heartbeat.ts';
import type { NodeRecord, NodeRegistry } from './node-registry.ts';

/** The model id on a `nodes` backend that means "the node's first model", as `@default` does for the engine. */
export const NODE_DEFAULT_MODEL = '@default';

/** One node tried for one request: run it, then ask what it measured. */
export interface NodeAttempt {
  nodeId: string;
  chat(messages: readonly ChatMessage[], options: ChatOptions): Promise<GenerateResult>;
  /** The Joules the node measured for this request (its GPU counter, apportioned), or null. Never throws. */
  energy(): Promise<number | null>;
}

export interface NodePoolOptions {
  /** Connecting to a node (a dead host fails within this), ms. */
  connectTimeoutMs?: number;
  /** Longest silence before and within an answer, ms. */
  firstByteTimeoutMs?: number;
  /** Asking a node for its measured Joules after the answer, ms. */
  energyTimeoutMs?: number;
}

/**
 * The gateway's side of inference nodes: which live nodes serve a model, least loaded first, and
 * how to run a request on one. Load is the larger of what the node last reported (active plus
 * waiting, from its heartbeat: that counts every gateway replica's requests) and this replica's own
 * requests to it now (which counts the ones sent since that heartbeat), over the node's slots.
 * Ties go to the node this replica has fewer requests on, then by id, so the order is stable.
 */
export class NodePool {
  readonly #registry: NodeRegistry;
  readonly #options: Required<NodePoolOptions>;
  /** Requests this replica has in flight per node id. */
  readonly #inFlight = new Map<string, number>();

  constructor(registry: NodeRegistry, options: NodePoolOptions = {}) {
    this.#registry = registry;
    this.#options = { connectTimeoutMs: options.connectTimeoutMs ?? 3000, firstByteTimeoutMs: options.firstByteTimeoutMs ?? 120_000, energyTimeoutMs: options.energyTimeoutMs ?? 2000 };
  }

  get registry(): NodeRegistry {
    return this.#registry;
  }

  /** This replica's requests on a node now. */
  inFlight(nodeId: string): number {
    return this.#inFlight.get(nodeId) ?? 0;
  }

  #score(node: NodeRecord): number {
    const { active, waiting, slots } = node.heartbeat.load;
    return Math.max(active + waiting, this.inFlight(node.id)) / slots;
  }

  /** The live nodes serving `model` (a node's own id, or NODE_DEFAULT_MODEL), least loaded first, each as an attempt. */
  async candidates(model: string, hostedModel: string): Promise<NodeAttempt[]> {
    let live: NodeRecord[];
    try {
      live = await this.#registry.live();
    } catch (error) {
      throw new ApiError({ status: 503, type: 'server_error', code: 'node_registry_unavailable', message: 'The inference-node registry cannot be read.', cause: error });
    }
    const serving = live
      .map((node) => ({ node, id: model === NODE_DEFAULT_MODEL ? node.heartbeat.models[0]?.id : node.heartbeat.models.find((m) => m.id === model)?.id }))
      .filter((n): n is { node: NodeRecord; id: string } => n.id !== undefined);
    serving.sort((a, b) => this.#score(a.node) - this.#score(b.node) || this.inFlight(a.node.id) - this.inFlight(b.node.id) || (a.node.id < b.node.id ? -1 : 1));
    return serving.map(({ node, id }) => this.#attempt(node, id, hostedModel));
  }

  #attempt(node: NodeRecord, model: string, hostedModel: string): NodeAttempt {
    const requestId = randomUUID();
    const base = node.heartbeat.advertise_url.replace(/\/+$/, '');
    const token = new Secret(node.heartbeat.call_token);
    let ran = false;
    return {
      nodeId: node.id,
      chat: async (messages, options) => {
        ran = true;
        this.#inFlight.set(node.id, this.inFlight(node.id) + 1);
        // One connection pool per attempt: the request id rides in its headers, so the node can
        // tell the gateway afterwards what this request measured.
        const upstream = new OpenAIUpstream({
          name: `node ${node.id}`, baseUrl: `${base}/v1`, kind: 'remote', apiKey: token,
          connectTimeoutMs: this.#options.connectTimeoutMs, firstByteTimeoutMs: this.#options.firstByteTimeoutMs,
          headers: { [NODE_REQUEST_ID_HEADER]: requestId },
        });
        try {
          return await upstream.model(model, hostedModel).chat(messages, options);
        } finally {
          const left = this.inFlight(node.id) - 1;
          if (left > 0) this.#inFlight.set(node.id, left);
          else this.#inFlight.delete(node.id);
          void upstream.close();
        }
      },
      energy: async () => {
        if (!ran || node.heartbeat.energy_source === null) return null;
        try {
          const response = await fetch(`${base}${NODE_ENERGY_PATH}/${requestId}`, {
            headers: { authorization: `Bearer ${token.reveal()}` },
            signal: AbortSignal.timeout(this.#options.energyTimeoutMs),
          });
          if (!response.ok) return null;
          const parsed = nodeEnergyReplySchema.safeParse(await response.json());
          return parsed.success ? parsed.data.raw_joules : null;
        } catch {
          // A node gone after answering: its work is estimated, never invented.
          return null;
        }
      },
    };
  }
}
