import { timingSafeEqual } from 'node:crypto';
import { createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { NODE_ENERGY_PATH, NODE_REQUEST_ID_HEADER } from '../../hosted/nodes/node-heartbeat.ts';
import type { Secret } from '../../shared/secret.ts';
import type { GpuEnergyMeter } from './gpu-energy-meter.ts';

/**
 * The one door of a joined node (`svc serve --join`) that is not loopback: the gateway's requests
 * come in here, with the call token the node gave the gateway in its heartbeat, and go on to the
 * daemon on loopback. Only `POST /v1/chat/completions`, `GET /v1/models` and the node's energy
 * answers pass; anything else, or anything without the token, is refused here and never reaches
 * the daemon, whose own listeners stay loopback-only with every loopback rule (Host, Origin) as before.
 */
export interface NodeListenerOptions {
  host: string;
  port: number;
  /** The daemon's own loopback URL, e.g. http://127.0.0.1:11435. */
  daemonUrl: string;
  callToken: Secret;
  meter: GpuEnergyMeter | null;
}

/** How long a request's measured Joules wait for the gateway to ask, and how many are kept. */
const ENERGY_KEEP_MS = 5 * 60_000;
const ENERGY_KEEP_MAX = 10_000;
const REQUEST_ID = /^[0-9a-f-]{36}$/;

function sendError(res: ServerResponse, status: number, code: string, message: string): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message, type: status === 401 ? 'authentication_error' : 'invalid_request_error', code } }));
}

function bearerMatches(header: string | undefined, token: Buffer): boolean {
  const match = typeof header === 'string' && header.length <= 512 ? /^bearer +(\S+)$/i.exec(header) : null;
  if (match === null) return false;
  const given = Buffer.from(match[1]!, 'utf8');
  return given.length === token.length && timingSafeEqual(given, token);
}

export interface NodeListener {
  url: string;
  close(): Promise<void>;
}

export async function startNodeListener(options: NodeListenerOptions): Promise<NodeListener> {
  const token = Buffer.from(options.callToken.reveal(), 'utf8');
  const daemon = new URL(options.daemonUrl);
  /** Measured Joules by the gateway's request id (insertion order is age order). */
  const energy = new Map<string, { at: number; joules: Promise<number | null> }>();
  const keep = (id: string, joules: Promise<number | null>): void => {
    const now = Date.now();
    for (const [key, entry] of energy) {
      if (energy.size < ENERGY_KEEP_MAX && entry.at > now - ENERGY_KEEP_MS) break;
      energy.delete(key);
    }
    energy.set(id, { at: now, joules });
  };

  const proxy = (req: IncomingMessage, res: ServerResponse): void => {
    const id = req.headers[NODE_REQUEST_ID_HEADER];
    const measurement = options.meter !== null && typeof id === 'string' && REQUEST_ID.test(id) ? options.meter.begin() : undefined;
    // Kept from the start, so the gateway's question may come before this side has seen the socket close.
    const closed = new Promise<void>((resolve) => res.once('close', resolve));
    if (measurement !== undefined) keep(id as string, closed.then(() => measurement.end()));
    const headers: Record<string, string> = { host: daemon.host };
    for (const name of ['content-type', 'content-length', 'accept']) {
      const value = req.headers[name];
      if (typeof value === 'string') headers[name] = value;
    }
    const upstream = httpRequest({ hostname: daemon.hostname.replace(/^\[|\]$/g, ''), port: daemon.port, path: req.url, method: req.method, headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on('error', () => sendError(res, 502, 'node_daemon_unavailable', 'The node\'s daemon did not answer.'));
    // The gateway gone (its client left, or it gave up): the daemon stops generating at once.
    void closed.then(() => upstream.destroy());
    req.pipe(upstream);
  };

  const server: Server = createServer((req, res) => {
    if (!bearerMatches(req.headers.authorization, token)) {
      req.resume();
      sendError(res, 401, 'node_call_token_invalid', 'This is an inference node: it answers only its gateway.');
      return;
    }
    const path = (req.url ?? '').split('?')[0]!;
    if (req.method === 'GET' && path.startsWith(`${NODE_ENERGY_PATH}/`)) {
      const entry = energy.get(path.slice(NODE_ENERGY_PATH.length + 1));
      if (entry === undefined) {
        sendError(res, 404, 'node_energy_not_found', 'No measurement for that request.');
        return;
      }
      void entry.joules.then((joules) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ raw_joules: joules })));
      return;
    }
    if ((req.method === 'POST' && path === '/v1/chat/completions') || (req.method === 'GET' && path === '/v1/models')) {
      proxy(req, res);
      return;
    }
    req.resume();
    sendError(res, 404, 'unknown_route', 'An inference node serves only chat completions and its model list to its gateway.');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  return {
    url: `http://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}`,
    // No new connections; requests running finish as the daemon drains (the process exits after it).
    close: async () => {
      server.close();
      server.closeIdleConnections();
    },
  };
}
