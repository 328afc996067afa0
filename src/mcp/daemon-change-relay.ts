import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { McpLogger } from './mcp-server.ts';
import type { SpaceChanges } from './space-changes.ts';

export interface DaemonChangeRelayOptions {
  /** The daemon's base address (`SVC_URL`); its `/mcp` is where changes are heard. */
  base: string;
  /** Sent on every request (the developer key, when there is one). */
  headers: Readonly<Record<string, string>>;
  /** The bridge's own change feed: every change the daemon announces is passed on to it. */
  changes: SpaceChanges;
  log: McpLogger;
  /** Wait before trying again after the daemon was unreachable or the stream ended. */
  retryMs?: number;
}

const DEFAULT_RETRY_MS = 5_000;

/** The protocol revision the bridge speaks to the daemon: the daemon is svc too, so no probing. */
const DAEMON_PROTOCOL = '2026-07-28';

/**
 * The stdio bridge's ear on the daemon. Documents can be added by anyone (the HTTP API, an upload
 * job, another MCP client), and only the daemon knows; the bridge holds a 2026-07-28
 * `subscriptions/listen` stream on the daemon's `/mcp` (no session: it works on a
 * `--mcp-stateless` daemon too) that carries `notifications/resources/list_changed`, and passes
 * each one to its own client. A daemon that is down or restarts just means no relay until a
 * later attempt works; tools are unaffected.
 */
export class DaemonChangeRelay {
  readonly #options: DaemonChangeRelayOptions;
  readonly #retryMs: number;
  #client: Client | undefined;
  #timer: NodeJS.Timeout | undefined;
  #closed = false;

  constructor(options: DaemonChangeRelayOptions) {
    this.#options = options;
    this.#retryMs = options.retryMs ?? DEFAULT_RETRY_MS;
  }

  /** Starts listening; failures are retried in the background, never thrown. */
  start(): void {
    void this.#connect();
  }

  async #connect(): Promise<void> {
    if (this.#closed) return;
    const client = new Client({ name: 'svc-mcp-bridge', version: '1' }, { versionNegotiation: { mode: { pin: DAEMON_PROTOCOL } } });
    client.setNotificationHandler('notifications/resources/list_changed', () => this.#options.changes.changed());
    const transport = new StreamableHTTPClientTransport(new URL(`${this.#options.base}/mcp`), { requestInit: { headers: { ...this.#options.headers } } });
    // Any transport failure, or the stream ending (a daemon restart or shutdown), starts over.
    client.onerror = () => this.#retry(client);
    client.onclose = () => this.#retry(client);
    this.#client = client;
    try {
      await client.connect(transport);
      const subscription = await client.listen({ resourcesListChanged: true });
      void subscription.closed.then((how) => {
        if (how !== 'local') this.#retry(client);
      });
      this.#options.log.info({ url: this.#options.base }, 'svc mcp: listening for document changes on the daemon');
    } catch {
      this.#retry(client);
    }
  }

  #retry(client: Client): void {
    if (this.#closed || this.#client !== client) return;
    this.#client = undefined;
    void client.close().catch(() => {});
    this.#timer = setTimeout(() => void this.#connect(), this.#retryMs);
    this.#timer.unref();
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#timer);
    const client = this.#client;
    this.#client = undefined;
    await client?.close().catch(() => {});
  }
}
