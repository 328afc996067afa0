import type { FastifyBaseLogger, FastifyRequest } from 'fastify';

/**
 * Adds attribution (account and key ids, never a secret) to every log line of the request,
 * its request line too. pino's `setBindings` changes the request's own logger in place: a
 * child logger per request cost about 4 µs on the hosted hot path, this about 0.5 µs. A logger
 * without it (logging off) gets a child.
 */
export function bindRequestLog(request: FastifyRequest, bindings: Readonly<Record<string, string>>): void {
  const log = request.log as FastifyBaseLogger & { setBindings?: (bindings: Readonly<Record<string, string>>) => void };
  if (typeof log.setBindings === 'function') log.setBindings(bindings);
  else request.log = log.child(bindings);
}
