import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { z } from 'zod';
import { nodeHeartbeatReplySchema, type NodeHeartbeat } from '../../hosted/nodes/node-heartbeat.ts';
import { Secret } from '../../shared/secret.ts';
import { GpuEnergyMeter } from './gpu-energy-meter.ts';
import { startNodeListener } from './node-listener.ts';

/**
 * `svc serve --join`: the daemon runs as before (loopback only), and this agent makes it an
 * inference node of a hosted gateway. It opens the node listener (node-listener.ts) on
 * `--node-listen` for the gateway's requests, and beats: every few seconds it reads the daemon's
 * models and load from its own `/health` and posts them with the node token to
 * `<gateway>/api/nodes/heartbeat`. A refused token or an unreachable gateway is logged (once per
 * change, never the token) and retried; the daemon keeps serving its local users either way.
 */
export interface NodeJoinSettings {
  /** The gateway's base URL (`--join`). */
  gateway: string;
  token: Secret;
  /** Where the gateway reaches this node (`--advertise-url`). */
  advertiseUrl: string;
  /** Where the node listener binds (`--node-listen`). */
  listenHost: string;
  listenPort: number;
}

const healthSchema = z.object({
  model: z.object({ available: z.array(z.string()), active: z.number(), waiting: z.number() }),
});

/** Until the gateway says otherwise (its reply carries heartbeat_ms). */
const FIRST_INTERVAL_MS = 2000;

export interface NodeAgent {
  close(): Promise<void>;
}

export async function startNodeAgent(settings: NodeJoinSettings, daemonUrl: string, slots: number, log: Logger, env: NodeJS.ProcessEnv = process.env): Promise<NodeAgent> {
  // A new secret each start: the gateway presents it to this node; a node that restarts invalidates the old one.
  const callToken = new Secret(randomBytes(32).toString('base64url'));
  const meter = await GpuEnergyMeter.open(env);
  const listener = await startNodeListener({ host: settings.listenHost, port: settings.listenPort, daemonUrl, callToken, meter });
  const gateway = settings.gateway.replace(/\/+$/, '');
  const auth = { authorization: `Bearer ${settings.token.reveal()}` };
  log.info({ node_listen: listener.url, advertise_url: settings.advertiseUrl, gateway, energy: meter?.source ?? null },
    `inference node: gateway requests on ${listener.url}; joining ${gateway}${meter === null ? ' (no GPU energy counter: raw_joules null)' : ` (energy from ${meter.source})`}`);

  let timer: NodeJS.Timeout | undefined;
  let closed = false;
  let state = '';
  let interval = FIRST_INTERVAL_MS;
  const report = (next: string, write: () => void): void => {
    if (next !== state) write();
    state = next;
  };

  const beat = async (): Promise<void> => {
    try {
      const health = healthSchema.parse(await (await fetch(`${daemonUrl}/health`, { signal: AbortSignal.timeout(5000) })).json());
      const body: NodeHeartbeat = {
        advertise_url: settings.advertiseUrl,
        call_token: callToken.reveal(),
        models: health.model.available.map((id) => ({ id })),
        load: { active: health.model.active, waiting: health.model.waiting, slots },
        energy_source: meter?.source ?? null,
      };
      const response = await fetch(`${gateway}/api/nodes/heartbeat`, {
        method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify(body), signal: AbortSignal.timeout(5000),
      });
      if (response.status === 401 || response.status === 403) {
        await response.body?.cancel();
        report('refused', () => log.error({ status: response.status }, `the gateway ${gateway} refused this node's token; check --node-token (retrying)`));
        return;
      }
      if (!response.ok) {
        await response.body?.cancel();
        report(`status-${response.status}`, () => log.warn({ status: response.status }, `the gateway answered the heartbeat with ${response.status} (retrying)`));
        return;
      }
      const reply = nodeHeartbeatReplySchema.parse(await response.json());
      interval = reply.heartbeat_ms;
      report('joined', () => log.info({ node_id: reply.node_id, ttl_ms: reply.ttl_ms, heartbeat_ms: reply.heartbeat_ms, models: body.models.length }, `joined ${gateway} as node ${reply.node_id}`));
    } catch (error) {
      report('unreachable', () => log.warn({ err: { message: (error as Error).message } }, `cannot reach the gateway ${gateway} (retrying)`));
    }
  };

  const loop = async (): Promise<void> => {
    await beat();
    if (!closed) timer = setTimeout(() => void loop(), interval);
  };
  await loop();

  return {
    close: async () => {
      closed = true;
      clearTimeout(timer);
      // Leave at once, so the gateway stops sending work before the daemon drains.
      await fetch(`${gateway}/api/nodes/heartbeat`, { method: 'DELETE', headers: auth, signal: AbortSignal.timeout(2000) }).then((r) => r.body?.cancel(), () => {});
      await listener.close();
    },
  };
}
