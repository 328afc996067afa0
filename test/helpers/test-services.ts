/**
 * The PostgreSQL and Redis that the hosted tier's scale-out tests use. A contributor's machine may
 * have neither: then those tests are skipped, each file saying so in one line (what is missing,
 * where it was looked for, how to enable it), never silently. SVC_TEST_REQUIRE_SERVICES=1 (.ci/run
 * sets it) turns a missing service into a failure instead, so CI cannot pass without them.
 */
import { connect } from 'node:net';
import { test } from 'node:test';

/** The machine's PostgreSQL (trust auth), overridable for other setups. */
export const TEST_DATABASE_URL = process.env.SVC_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
export const TEST_REDIS_URL = process.env.SVC_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

interface Service { name: string; url: string; defaultPort: number; variable: string }
const POSTGRES: Service = { name: 'PostgreSQL', url: TEST_DATABASE_URL, defaultPort: 5432, variable: 'SVC_TEST_DATABASE_URL' };
const REDIS: Service = { name: 'Redis', url: TEST_REDIS_URL, defaultPort: 6379, variable: 'SVC_TEST_REDIS_URL' };

/** Whether something accepts TCP connections there within a second (the test itself checks the rest). */
function reachable(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port, timeout: 1000 });
    const done = (ok: boolean) => { socket.destroy(); resolve(ok); };
    socket.once('connect', () => done(true));
    socket.once('timeout', () => done(false));
    socket.once('error', () => done(false));
  });
}

const probes = new Map<Service, Promise<boolean>>();

/**
 * false when the service answers; else the reason to skip `what` (node:test's `skip` option),
 * after one line on stderr that says what is skipped and how to enable it. Under
 * SVC_TEST_REQUIRE_SERVICES=1 `what` is skipped all the same (one clear failure, not a pile of
 * connection errors) and a test that fails with that line stands in its place.
 * Called at a test file's top level (or beside its describe calls), where test() may be called.
 */
async function unavailable(service: Service, what: string): Promise<string | false> {
  const url = new URL(service.url);
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1') || '127.0.0.1';
  const port = Number(url.port || service.defaultPort);
  let probe = probes.get(service);
  if (probe === undefined) probes.set(service, probe = reachable(host, port));
  if (await probe) return false;
  const where = `${service.name} not reachable at ${url.hostname}:${port}`;
  if (process.env.SVC_TEST_REQUIRE_SERVICES === '1') {
    const message = `${where}, and SVC_TEST_REQUIRE_SERVICES=1 requires it (for ${what})`;
    test(message, () => { throw new Error(message); });
    return where;
  }
  process.stderr.write(`${where}: skipping ${what} (start it, or set ${service.variable}; SVC_TEST_REQUIRE_SERVICES=1 makes this a failure)\n`);
  return where;
}

export function postgresUnavailable(what: string): Promise<string | false> {
  return unavailable(POSTGRES, what);
}

export function redisUnavailable(what: string): Promise<string | false> {
  return unavailable(REDIS, what);
}
