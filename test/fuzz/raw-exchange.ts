/**
 * One HTTP/1.1 exchange over a raw `node:net` socket: write exactly the bytes given (no client
 * library normalises or refuses them), then read what comes back and parse the response(s)
 * ourselves, interim 1xx responses skipped.
 */
import { connect } from 'node:net';

export interface RawResponse {
  status: number;
  /** Lower-case names; repeated headers joined with ", ". */
  headers: Map<string, string>;
  body: Buffer;
}

export interface RawExchange {
  /** Final responses in order (a pipelined request may get more than one). */
  responses: RawResponse[];
  /** Bytes received that do not parse as an HTTP/1.x response. */
  unparsed: string | null;
  /** A socket error (ECONNRESET, EPIPE…) seen before the exchange ended. */
  error: string | null;
  /** No complete response and the socket still open when `timeoutMs` ran out. */
  timedOut: boolean;
  ms: number;
}

export interface ExchangeOptions {
  host: string;
  port: number;
  bytes: Buffer;
  /** `end`: half-close after writing; `destroy`: abort at once; `wait`: keep the socket open. */
  after?: 'end' | 'destroy' | 'wait';
  /** The request was HEAD: the reply has headers only, and is read until the socket closes (send `Connection: close`). */
  head?: boolean;
  timeoutMs: number;
}

type Parsed = { response: RawResponse; used: number } | { incomplete: true } | { invalid: string };

function parseOne(buf: Buffer, head: boolean, ended: boolean): Parsed {
  const end = buf.indexOf('\r\n\r\n');
  if (end < 0) return ended && buf.length > 0 ? { invalid: buf.subarray(0, 200).toString('latin1') } : { incomplete: true };
  const lines = buf.subarray(0, end).toString('latin1').split('\r\n');
  const match = /^HTTP\/1\.[01] (\d{3})(?: .*)?$/.exec(lines[0] ?? '');
  if (match === null) return { invalid: (lines[0] ?? '').slice(0, 200) };
  const status = Number(match[1]);
  const headers = new Map<string, string>();
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(':');
    if (colon <= 0) return { invalid: `header line ${JSON.stringify(line.slice(0, 100))}` };
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    headers.set(name, headers.has(name) ? `${headers.get(name)}, ${value}` : value);
  }
  const start = end + 4;
  if (head && ended && buf.length > start && !buf.subarray(start).toString('latin1').startsWith('HTTP/1.')) {
    // A reply to a request the parser refused: the server did not know it was HEAD, so it sent a body.
    const n = Number(headers.get('content-length') ?? buf.length - start);
    return { response: { status, headers, body: buf.subarray(start, start + n) }, used: Math.min(buf.length, start + n) };
  }
  if (head || status === 204 || status === 304 || (status >= 100 && status < 200)) return { response: { status, headers, body: Buffer.alloc(0) }, used: start };
  if (/\bchunked\b/i.test(headers.get('transfer-encoding') ?? '')) {
    const parts: Buffer[] = [];
    let at = start;
    for (;;) {
      const lineEnd = buf.indexOf('\r\n', at);
      if (lineEnd < 0) return ended ? { invalid: 'truncated chunked body' } : { incomplete: true };
      const size = Number.parseInt(buf.subarray(at, lineEnd).toString('latin1'), 16);
      if (!Number.isFinite(size)) return { invalid: 'bad chunk size in response' };
      if (size === 0) {
        const trailerEnd = buf.indexOf('\r\n\r\n', lineEnd);
        if (trailerEnd < 0) return ended ? { response: { status, headers, body: Buffer.concat(parts) }, used: buf.length } : { incomplete: true };
        return { response: { status, headers, body: Buffer.concat(parts) }, used: trailerEnd + 4 };
      }
      if (buf.length < lineEnd + 2 + size + 2) return ended ? { invalid: 'truncated chunk' } : { incomplete: true };
      parts.push(buf.subarray(lineEnd + 2, lineEnd + 2 + size));
      at = lineEnd + 2 + size + 2;
    }
  }
  const length = headers.get('content-length');
  if (length !== undefined) {
    const n = Number(length);
    if (!Number.isSafeInteger(n) || n < 0) return { invalid: `content-length ${length}` };
    if (buf.length - start < n) return ended ? { invalid: `body ended after ${buf.length - start} of ${n} bytes` } : { incomplete: true };
    return { response: { status, headers, body: buf.subarray(start, start + n) }, used: start + n };
  }
  // No length: the body runs to the end of the connection.
  return ended ? { response: { status, headers, body: buf.subarray(start) }, used: buf.length } : { incomplete: true };
}

/**
 * Sends `bytes` and collects responses until `expected` final responses are in or the server
 * closes the socket.
 */
export function rawExchange(options: ExchangeOptions, expected = 1): Promise<RawExchange> {
  const started = performance.now();
  return new Promise((resolve) => {
    const socket = connect({ host: options.host, port: options.port });
    const chunks: Buffer[] = [];
    let error: string | null = null;
    let settled = false;
    const responses: RawResponse[] = [];
    let unparsed: string | null = null;

    const drain = (ended: boolean): void => {
      let buf = Buffer.concat(chunks);
      for (;;) {
        if (buf.length === 0) break;
        const parsed = parseOne(buf, options.head ?? false, ended);
        if ('incomplete' in parsed) break;
        if ('invalid' in parsed) {
          unparsed = parsed.invalid;
          buf = Buffer.alloc(0);
          break;
        }
        if (parsed.response.status >= 200) responses.push(parsed.response);
        buf = buf.subarray(parsed.used);
      }
      chunks.length = 0;
      if (buf.length > 0) chunks.push(buf);
    };
    const finish = (timedOut: boolean): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      drain(true);
      socket.destroy();
      resolve({ responses, unparsed, error, timedOut: timedOut && responses.length === 0, ms: performance.now() - started });
    };
    const timer = setTimeout(() => finish(true), options.timeoutMs);

    socket.on('data', (d: Buffer) => {
      chunks.push(d);
      // A HEAD reply may or may not carry a body (see parseOne): it is read to the end of the connection.
      if (options.head) return;
      drain(false);
      if (responses.length >= expected) finish(false);
    });
    socket.on('error', (e: NodeJS.ErrnoException) => {
      error ??= e.code ?? e.message;
    });
    socket.on('close', () => finish(false));
    socket.on('connect', () => {
      socket.write(options.bytes, (e) => {
        if (e) error ??= (e as NodeJS.ErrnoException).code ?? e.message;
      });
      if (options.after === 'end') socket.end();
      if (options.after === 'destroy') socket.destroy();
    });
  });
}
