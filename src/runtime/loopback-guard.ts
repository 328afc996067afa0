import type { FastifyInstance } from 'fastify';
import { isIP } from 'node:net';
import { ApiError } from '../shared/api-error.ts';

const LOOPBACK_NAMES = new Set(['localhost', '127.0.0.1', '::1', '[::1]']);

/** True for `localhost`, `*.localhost`, 127.0.0.0/8 and ::1. */
export function isLoopbackHostname(hostname: string): boolean {
  const name = hostname.toLowerCase().replace(/\.$/, '');
  if (LOOPBACK_NAMES.has(name) || name.endsWith('.localhost')) return true;
  const bare = name.startsWith('[') && name.endsWith(']') ? name.slice(1, -1) : name;
  if (isIP(bare) === 4) return bare.startsWith('127.');
  return bare === '::1' || bare === '0:0:0:0:0:0:0:1';
}

/** Strips the port from a Host header value (`[::1]:11435` → `[::1]`). */
function hostnameOfHostHeader(host: string): string {
  if (host.startsWith('[')) return host.slice(0, host.indexOf(']') + 1);
  const colon = host.lastIndexOf(':');
  return colon >= 0 ? host.slice(0, colon) : host;
}

function forbidden(message: string): ApiError {
  return new ApiError({ status: 403, type: 'permission_error', code: 'forbidden_host', message });
}

/**
 * DNS-rebinding protection: a web page on an attacker's domain that resolves to 127.0.0.1
 * still sends its own Host and Origin, so both must name a loopback host. Requests without an
 * Origin (curl, SDKs) pass; browsers always send Host.
 */
export function installLoopbackGuard(app: FastifyInstance): void {
  app.addHook('onRequest', async (request) => {
    const host = request.headers.host;
    if (host !== undefined && !isLoopbackHostname(hostnameOfHostHeader(host))) {
      throw forbidden(`Host '${host}' is not a loopback name; the local daemon only answers requests addressed to localhost.`);
    }
    const origin = request.headers.origin;
    if (origin !== undefined) {
      let hostname: string | undefined;
      try {
        hostname = new URL(origin).hostname;
      } catch {
        hostname = undefined;
      }
      if (hostname === undefined || !isLoopbackHostname(hostname)) {
        throw forbidden(`Origin '${origin}' is not a loopback origin; cross-site requests to the local daemon are refused.`);
      }
    }
  });
}
