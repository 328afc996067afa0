/**
 * Sends generated requests and framing cases to a daemon endpoint over raw sockets and returns
 * the exchange with what it broke (shared by the fuzz test and bench/reliability.ts).
 */
import { exchangeViolations } from './envelope-violations.ts';
import { requestBytes, type FramingCase, type HostileRequest } from './hostile-requests.ts';
import { rawExchange, type RawExchange } from './raw-exchange.ts';

export interface Endpoint {
  /** Host header value (`127.0.0.1:port`, `[::1]:port`). */
  host: string;
  /** Address to connect to. */
  address: string;
  port: number;
}

/** The endpoints of a daemon's listening URLs (`http://127.0.0.1:p`, `http://[::1]:p`). */
export function endpointsOf(urls: string[]): Endpoint[] {
  return urls.map((u) => {
    const url = new URL(u);
    return { host: url.host, address: url.hostname.replace(/^\[(.*)\]$/, '$1'), port: Number(url.port) };
  });
}

export interface Sent {
  exchange: RawExchange;
  violations: string[];
}

export async function sendHostile(req: HostileRequest, at: Endpoint, timeoutMs: number): Promise<Sent> {
  const head = req.method === 'HEAD';
  const exchange = await rawExchange({ host: at.address, port: at.port, bytes: requestBytes(req, at.host), after: 'wait', head, timeoutMs });
  return { exchange, violations: exchangeViolations(exchange, { head, foreignCharset: req.foreignCharset, mayBeSilent: false, responses: 1 }) };
}

export async function sendFraming(c: FramingCase, at: Endpoint, timeoutMs: number): Promise<Sent> {
  const exchange = await rawExchange({ host: at.address, port: at.port, bytes: c.bytes(at.host), after: c.after, head: c.head, timeoutMs }, c.responses);
  return { exchange, violations: exchangeViolations(exchange, { head: c.head, foreignCharset: false, mayBeSilent: c.mayBeSilent, responses: 1, refuse: c.refuse }) };
}
