import { createServer, type RequestListener, type Server, type ServerOptions } from 'node:http';

/**
 * Node's HTTP server settings for the daemon. `requestTimeout` cuts off clients that never
 * finish sending a request (slowloris); Node only checks it every `connectionsCheckingInterval`
 * (30 s by default), so the interval follows the timeout. Responses (long streams) are not
 * bounded by it.
 */
export function createHttpServer(requestTimeoutMs: number, handler: RequestListener): Server {
  const options: ServerOptions = {
    requestTimeout: requestTimeoutMs,
    headersTimeout: requestTimeoutMs === 0 ? 60_000 : Math.min(60_000, requestTimeoutMs),
    keepAliveTimeout: 5_000,
    connectionsCheckingInterval: requestTimeoutMs === 0 ? 30_000 : Math.max(100, Math.min(30_000, Math.floor(requestTimeoutMs / 4))),
  };
  return createServer(options, handler);
}
