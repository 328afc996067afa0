import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { NodeStreamableHTTPServerTransport as StreamableHTTPServerTransport, toNodeHandler, toWebRequest } from '@modelcontextprotocol/node';
import { createMcpHandler, isInitializeRequest, isLegacyRequest, type McpServer } from '@modelcontextprotocol/server';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../shared/api-error.ts';
import { parseJsonBody } from '../shared/json-body.ts';
import { drainRequest, LINGER_MS } from '../http/openai-error-handler.ts';
import { buildMcpServer, type McpLogger } from './mcp-server.ts';
import type { LocalRuntimeClient } from './local-runtime-client.ts';
import type { SpaceChanges } from './space-changes.ts';

/**
 * `/mcp` (Streamable HTTP) on the daemon's listener, through the MCP TypeScript SDK v2. The
 * daemon's hooks run first (loopback Host/Origin guard → 403, draining, developer keys), so the
 * SDK's own DNS-rebinding check, an exact host:port list, is left off: the guard already refuses
 * every non-loopback Host and Origin, on every port the daemon binds.
 *
 * Two protocol eras share the path, told apart by the SDK's own classifier (`isLegacyRequest`):
 * a request carrying the 2026-07-28 `_meta` envelope (or its `MCP-Protocol-Version` header) is
 * served by `createMcpHandler`: no handshake, no session, one fresh server per request,
 * `server/discover`, and `subscriptions/listen` streams that carry resource-list changes (at most
 * `maxSessions` open at once). Everything else is 2025-era traffic (2025-11-25, 2025-06-18):
 *
 * Sessions are the SDK's: `initialize` without a session id opens one (its id comes back in
 * `Mcp-Session-Id`), later requests carry it, `GET` opens the server-to-client SSE stream,
 * `DELETE` ends it; an unknown id is 404, as the spec asks, so the client starts over. A session
 * belongs to the caller that opened it (its developer key, or none): a request on it made as
 * anyone else is answered 404 as if the id did not exist, so holding another's session id
 * neither uses, ends nor confirms that session. Sessions
 * idle past `sessionIdleMs` are closed; at `maxSessions` a new one is refused (503). In
 * stateless mode each POST gets a fresh server and transport, and GET/DELETE are 405.
 *
 * Every error on these routes is a JSON-RPC error object, not the OpenAI envelope: that is what
 * an MCP client reads.
 */
export interface McpRoutesOptions {
  runtime: LocalRuntimeClient;
  log: McpLogger;
  changes: SpaceChanges;
  stateless: boolean;
  maxSessions: number;
  sessionIdleMs: number;
  /** Largest JSON-RPC body, bytes. */
  bodyLimit: number;
  /** Aborted when the daemon starts shutting down: open sessions (and their SSE streams) end at once. */
  drainingSignal: AbortSignal;
}

export const DEFAULT_MCP_BODY_LIMIT = 4 * 1024 * 1024;

/** JSON-RPC's and the MCP SDK's codes for transport-level errors. */
const PARSE_ERROR = -32700;
const INVALID_REQUEST = -32600;
const SERVER_ERROR = -32000;
const SESSION_NOT_FOUND = -32001;

/**
 * The identity a request is made as: the verified developer key's id (never the secret), or
 * undefined without one (anonymous: no key, `none`, another tool's key, on a daemon that
 * does not require keys). Not a string for anonymous, so no key id can ever equal it.
 */
function callerOf(request: FastifyRequest): string | undefined {
  return request.developerKey?.keyId;
}

interface Session {
  /** Who opened it (callerOf): only the same caller may use or end it (sessionOf). */
  owner: string | undefined;
  transport: StreamableHTTPServerTransport;
  server: McpServer;
  lastSeen: number;
  /** Requests (and SSE streams) still open: a session is not idle while one is. */
  active: number;
}

class JsonRpcHttpError extends Error {
  readonly status: number;
  readonly rpcCode: number;
  readonly headers: Record<string, string>;

  constructor(status: number, rpcCode: number, message: string, headers: Record<string, string> = {}) {
    super(message);
    this.status = status;
    this.rpcCode = rpcCode;
    this.headers = headers;
  }
}

function sendJsonRpcError(reply: FastifyReply, status: number, rpcCode: number, message: string, headers: Record<string, string> = {}): FastifyReply {
  return reply.code(status).headers(headers).header('content-type', 'application/json').send({ jsonrpc: '2.0', error: { code: rpcCode, message }, id: null });
}

function isJsonContentType(value: string | undefined): boolean {
  return value !== undefined && /^application\/json\s*(;|$)/i.test(value.trim());
}

/** The JSON-RPC answer for an error raised before the transport saw the request. */
function toJsonRpcError(error: FastifyError | ApiError | JsonRpcHttpError): JsonRpcHttpError {
  if (error instanceof JsonRpcHttpError) return error;
  if (error instanceof ApiError) {
    const retry: Record<string, string> = error.retryAfterSeconds === undefined ? {} : { 'retry-after': String(error.retryAfterSeconds) };
    return new JsonRpcHttpError(error.status, error.status === 400 && error.code === 'invalid_json' ? PARSE_ERROR : SERVER_ERROR, error.status >= 500 && error.status !== 503 ? 'Internal error' : error.message, { ...error.headers, ...retry });
  }
  const status = typeof error.statusCode === 'number' && error.statusCode >= 400 && error.statusCode < 600 ? error.statusCode : 500;
  if (status === 413) return new JsonRpcHttpError(413, SERVER_ERROR, 'The JSON-RPC body is larger than this server accepts.');
  if (status === 415) return new JsonRpcHttpError(415, SERVER_ERROR, 'Unsupported Media Type: Content-Type must be application/json');
  if (status < 500) return new JsonRpcHttpError(status, INVALID_REQUEST, error.message);
  return new JsonRpcHttpError(500, SERVER_ERROR, 'Internal error');
}

export async function mcpRoutes(app: FastifyInstance, options: McpRoutesOptions): Promise<void> {
  const sessions = new Map<string, Session>();
  const newServer = (announceChanges = true): McpServer => buildMcpServer({ runtime: options.runtime, log: options.log, changes: options.changes, announceChanges });

  // 2026-07-28: stateless by design; 2025-era requests never reach it (`legacy: 'reject'` is the
  // strict answer should one slip past the classifier), they take the session routes below.
  const modern = createMcpHandler(() => newServer(false), {
    legacy: 'reject',
    maxRequestBodySize: options.bodyLimit,
    maxSubscriptions: options.maxSessions,
    onerror: (error) => options.log.warn({ err_name: error.name }, 'mcp request failed'),
  });
  const serveModern = toNodeHandler(modern, { maxRequestBodySize: options.bodyLimit, onerror: (error) => options.log.warn({ err_name: error.name }, 'mcp transport failed') });
  const stopRelay = options.changes.subscribe(() => modern.notify.resourcesChanged());

  const closeSession = async (id: string, session: Session): Promise<void> => {
    sessions.delete(id);
    await session.transport.close().catch(() => {});
    await session.server.close().catch(() => {});
  };
  const closeAll = (): Promise<void> => Promise.all([modern.close(), ...[...sessions].map(([id, s]) => closeSession(id, s))]).then(() => {});

  const sweep = setInterval(() => {
    const now = performance.now();
    for (const [id, session] of sessions) {
      if (session.active === 0 && now - session.lastSeen > options.sessionIdleMs) {
        options.log.info({ idle_ms: Math.round(now - session.lastSeen) }, 'mcp session closed after idling');
        void closeSession(id, session);
      }
    }
  }, Math.max(1000, Math.min(60_000, Math.floor(options.sessionIdleMs / 4))));
  sweep.unref();
  const onDraining = (): void => void closeAll();
  options.drainingSignal.addEventListener('abort', onDraining, { once: true });
  app.addHook('onClose', async () => {
    clearInterval(sweep);
    stopRelay();
    options.drainingSignal.removeEventListener('abort', onDraining);
    await closeAll();
  });

  // JSON-RPC bodies only; the daemon's own JSON parser (OpenAI envelope errors) stays off this scope.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: options.bodyLimit }, (_request, body, done) => done(null, body));
  app.setErrorHandler(async (error: FastifyError | ApiError | JsonRpcHttpError, request, reply) => {
    const rpc = toJsonRpcError(error);
    // As on every route: read the rest of a refused upload, or the client gets a reset, not the 413.
    if (rpc.status === 413 && !request.raw.readableEnded) await drainRequest(request, LINGER_MS);
    if (rpc.status === 500) options.log.warn({ err_name: (error as Error).name }, 'mcp request failed');
    return sendJsonRpcError(reply, rpc.status, rpc.rpcCode, rpc.message, rpc.headers);
  });

  /** Hands the raw request to the SDK; headers set by hooks so far (CORS) go along. */
  const handOver = async (request: FastifyRequest, reply: FastifyReply, serve: StreamableHTTPServerTransport | 'modern', body: unknown, onDone?: () => void): Promise<void> => {
    reply.hijack();
    const raw: ServerResponse = reply.raw;
    for (const [name, value] of Object.entries(reply.getHeaders())) if (value !== undefined) raw.setHeader(name, value);
    if (request.headers.origin !== undefined) raw.setHeader('access-control-expose-headers', 'mcp-session-id, mcp-protocol-version');
    if (onDone !== undefined) raw.once('close', onDone);
    try {
      if (serve === 'modern') await serveModern(request.raw, raw, body);
      else await serve.handleRequest(request.raw, raw, body);
    } catch (error) {
      options.log.warn({ err_name: (error as Error).name }, 'mcp transport failed');
      if (!raw.headersSent) {
        raw.writeHead(500, { 'content-type': 'application/json' });
        raw.end(JSON.stringify({ jsonrpc: '2.0', error: { code: SERVER_ERROR, message: 'Internal error' }, id: null }));
      } else {
        raw.end();
      }
    }
  };

  const parseBody = (request: FastifyRequest): unknown => {
    if (!isJsonContentType(request.headers['content-type'])) throw new JsonRpcHttpError(415, SERVER_ERROR, 'Unsupported Media Type: Content-Type must be application/json');
    if (!Buffer.isBuffer(request.body)) throw new JsonRpcHttpError(400, PARSE_ERROR, 'Parse error: the body is empty');
    try {
      return parseJsonBody(request.body, { maxValues: 300_000 });
    } catch (error) {
      throw new JsonRpcHttpError(400, PARSE_ERROR, `Parse error: ${error instanceof Error ? error.message : 'invalid JSON'}`);
    }
  };

  const sessionOf = (request: FastifyRequest): [string, Session] | undefined => {
    const header = request.headers['mcp-session-id'];
    if (header === undefined) return undefined;
    const id = Array.isArray(header) ? header[0] ?? '' : header;
    const session = sessions.get(id);
    // Another caller's session answers exactly as an unknown id: a session id seen in a log or
    // a shared proxy gives no way into it, and not even the knowledge that it is live.
    if (session === undefined || session.owner !== callerOf(request)) {
      throw new JsonRpcHttpError(404, SESSION_NOT_FOUND, 'Session not found: it ended or never existed; initialize a new one.');
    }
    return [id, session];
  };

  /** Counts an open request against the session's idleness until its response closes. */
  const using = (session: Session): (() => void) => {
    session.active++;
    session.lastSeen = performance.now();
    return () => {
      session.active--;
      session.lastSeen = performance.now();
    };
  };

  const statelessPost = async (request: FastifyRequest, reply: FastifyReply, body: unknown): Promise<void> => {
    const server = newServer();
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    await server.connect(transport);
    await handOver(request, reply, transport, body, () => {
      void transport.close().catch(() => {});
      void server.close().catch(() => {});
    });
  };

  // Initializes in flight hold a place too, or concurrent ones all pass the cap while awaiting.
  let opening = 0;
  const openSession = async (request: FastifyRequest, reply: FastifyReply, body: unknown): Promise<void> => {
    if (sessions.size + opening >= options.maxSessions) {
      throw new JsonRpcHttpError(503, SERVER_ERROR, `This server holds at most ${options.maxSessions} MCP sessions at once; end one (DELETE /mcp) or wait for an idle one to expire.`, { 'retry-after': '5' });
    }
    opening++;
    let reserved = true;
    const release = (): void => {
      if (reserved) opening--;
      reserved = false;
    };
    const server = newServer();
    const session: Session = {
      owner: callerOf(request),
      server,
      lastSeen: performance.now(),
      active: 0,
      transport: new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => {
          release();
          sessions.set(id, session);
        },
        onsessionclosed: (id) => {
          sessions.delete(id);
        },
      }),
    };
    session.transport.onclose = () => {
      const id = session.transport.sessionId;
      if (id !== undefined && sessions.get(id) === session) sessions.delete(id);
      void server.close().catch(() => {});
    };
    const done = using(session);
    try {
      await server.connect(session.transport);
    } catch (error) {
      release();
      await server.close().catch(() => {});
      throw error;
    }
    await handOver(request, reply, session.transport, body, () => {
      done();
      release();
      // The SDK refused the initialize (wrong Accept, a batch...) before it made a session: nothing
      // else holds this server, so it closes here or it stays subscribed to space changes forever.
      const id = session.transport.sessionId;
      if (id === undefined || sessions.get(id) !== session) {
        void session.transport.close().catch(() => {});
        void server.close().catch(() => {});
      }
    });
  };

  app.post('/mcp', async (request, reply) => {
    const body = parseBody(request);
    if (!(await isLegacyRequest(await toWebRequest(request.raw, body), body, { maxRequestBodySize: options.bodyLimit }))) return handOver(request, reply, 'modern', body);
    if (options.stateless) return statelessPost(request, reply, body);
    const found = sessionOf(request);
    if (found !== undefined) return handOver(request, reply, found[1].transport, body, using(found[1]));
    const initialize = Array.isArray(body) ? body.some((m) => isInitializeRequest(m)) : isInitializeRequest(body);
    if (!initialize) throw new JsonRpcHttpError(400, SERVER_ERROR, 'Bad Request: send the Mcp-Session-Id header the initialize response gave, or initialize a session first.');
    return openSession(request, reply, body);
  });

  const withSession = async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    if (options.stateless) throw new JsonRpcHttpError(405, SERVER_ERROR, 'Method not allowed: this server is stateless (no sessions, no server-to-client stream).', { allow: 'POST' });
    const found = sessionOf(request);
    if (found === undefined) throw new JsonRpcHttpError(400, SERVER_ERROR, 'Bad Request: Mcp-Session-Id header is required');
    return handOver(request, reply, found[1].transport, undefined, using(found[1]));
  };
  app.get('/mcp', withSession);
  app.delete('/mcp', withSession);

}
