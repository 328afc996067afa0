import type { FastifyInstance, FastifyRequest } from 'fastify';
import { isIP } from 'node:net';
import { ApiError } from '../shared/api-error.ts';
import { truncateInput } from '../shared/quote-input.ts';
import { isLoopbackHostname } from '../shared/loopback-hostname.ts';

/** RFC 3986 reg-name (unreserved, sub-delims, percent-encoded octets), non-empty as HTTP requires. */
const REG_NAME = /^(?:[A-Za-z0-9\-._~!$&'()*+,;=]|%[0-9A-Fa-f]{2})+$/;
const PORT = /^[0-9]{1,5}$/;

export interface HostHeader {
  /** As sent, brackets kept for an IPv6 literal: `localhost`, `127.0.0.1`, `[::1]`. */
  hostname: string;
  port: number | undefined;
}

/**
 * Parses a Host header as RFC 9110 defines it, `uri-host [ ":" port ]`, with a port of
 * 1–65535; undefined for anything else (userinfo, spaces, a second value, junk after an IPv6
 * literal, an empty or out-of-range port). Strict on purpose: a lenient parser (WHATWG URL
 * drops `user@` and whitespace) could read a loopback name out of a value naming another host.
 */
export function parseHostHeader(value: string): HostHeader | undefined {
  let hostname: string;
  let rest: string;
  if (value.startsWith('[')) {
    const close = value.indexOf(']');
    if (close < 0 || isIP(value.slice(1, close)) !== 6) return undefined;
    hostname = value.slice(0, close + 1);
    rest = value.slice(close + 1);
  } else {
    const colon = value.indexOf(':');
    hostname = colon < 0 ? value : value.slice(0, colon);
    rest = colon < 0 ? '' : value.slice(colon);
    if (!REG_NAME.test(hostname)) return undefined;
  }
  if (rest === '') return { hostname, port: undefined };
  const digits = rest.slice(1);
  if (!rest.startsWith(':') || !PORT.test(digits)) return undefined;
  const port = Number(digits);
  return port >= 1 && port <= 65_535 ? { hostname, port } : undefined;
}

function forbidden(message: string): ApiError {
  return new ApiError({ status: 403, type: 'permission_error', code: 'forbidden_host', message });
}

function invalidHost(message: string): ApiError {
  return ApiError.invalidRequest(message, null, 'invalid_host_header');
}

/** Node keeps the first of several Host headers in `headers`; the raw list shows them all. */
function hostHeaderCount(request: FastifyRequest): number {
  const raw = request.raw.rawHeaders;
  let count = 0;
  for (let i = 0; i < raw.length; i += 2) if (raw[i]!.toLowerCase() === 'host') count++;
  return count;
}

/** Captures the authority (`host:port`) of an absolute-form target (`GET http://host/path HTTP/1.1`). */
const ABSOLUTE_FORM = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/([^/?#]*)/;

/** 400 for a malformed host, 403 for one that is not loopback; `what` names where it came from. */
function checkAuthority(value: string, what: string): void {
  const parsed = parseHostHeader(value);
  if (parsed === undefined) {
    throw invalidHost(`${what} '${truncateInput(value)}' is not a valid host name with an optional port (1-65535).`);
  }
  if (!isLoopbackHostname(parsed.hostname)) {
    throw forbidden(`${what} '${truncateInput(value)}' is not a loopback name; the local daemon only answers requests addressed to localhost.`);
  }
}

function checkHost(request: FastifyRequest): void {
  // RFC 9112 §3.2.2: the authority of an absolute-form target overrides Host, and the router
  // serves `GET http://evil.example/health` as `/health`, so it must name loopback too.
  const absolute = ABSOLUTE_FORM.exec(request.raw.url ?? '');
  if (absolute !== null) checkAuthority(absolute[1]!, 'Request target host');
  const count = hostHeaderCount(request);
  if (count > 1) throw invalidHost(`The request has ${count} Host headers; send exactly one.`);
  const host = request.headers.host;
  if (host === undefined) {
    // RFC 9112 §3.2: an HTTP/1.1 request without Host is refused; HTTP/1.0 had no Host yet.
    if (request.raw.httpVersion === '1.0') return;
    throw invalidHost('An HTTP/1.1 request must send a Host header (e.g. Host: localhost).');
  }
  checkAuthority(host, 'Host');
}

function checkOrigin(request: FastifyRequest): void {
  const origin = request.headers.origin;
  if (origin === undefined) return;
  let hostname: string | undefined;
  try {
    hostname = new URL(origin).hostname;
  } catch {
    hostname = undefined;
  }
  if (hostname === undefined || !isLoopbackHostname(hostname)) {
    throw forbidden(`Origin '${truncateInput(origin)}' is not a loopback origin; cross-site requests to the local daemon are refused.`);
  }
}

/**
 * DNS-rebinding protection: a web page on an attacker's domain that resolves to 127.0.0.1
 * still sends its own Host and Origin, so both must name a loopback host. Requests without an
 * Origin (curl, SDKs) pass; browsers always send Host. A malformed or repeated Host is a 400:
 * intermediaries and the router could each read a different host out of it.
 */
export function installLoopbackGuard(app: FastifyInstance): void {
  app.addHook('onRequest', async (request) => {
    try {
      checkHost(request);
      checkOrigin(request);
    } catch (error) {
      // Not a job for the job log (request-log.ts): the request never reached its route.
      request.refusedByGuard = true;
      throw error;
    }
  });
}
