/**
 * `POST /telemetry/send` against a real endpoint on loopback: sends asked for together share one
 * report, a send soon after the last is refused 429 with Retry-After, and a send node:http
 * cannot even start (a bad %-escape in the endpoint's user info) is a 502, not a 500.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import Fastify, { type FastifyInstance } from 'fastify';
import { installOpenAIErrorHandler } from '../../src/http/openai-error-handler.ts';
import { DAY_MS } from '../../src/telemetry/recent-job-count.ts';
import { TelemetryReporter } from '../../src/telemetry/telemetry-reporter.ts';
import { telemetryRoutes } from '../../src/telemetry/telemetry-routes.ts';

/** `handled`: how many requests have reached their handler's hooks (the test waits on it, not on time). */
async function appFor(endpoint: URL, clock: { now: number }, handled = { count: 0 }): Promise<FastifyInstance> {
  const reporter = new TelemetryReporter({
    settings: { mode: 'basic', endpoint, intervalMs: DAY_MS },
    dailyJobCount: () => 0,
    onWarning: () => {},
  });
  const app = Fastify();
  installOpenAIErrorHandler(app);
  app.addHook('preHandler', async () => { handled.count++; });
  await app.register(telemetryRoutes, { reporter, minGapMs: 10_000, now: () => clock.now });
  return app;
}

test('sends asked for together share one report; another within 10 s is 429 with Retry-After; after it, a new one goes', async (t) => {
  const received: string[] = [];
  // The endpoint holds each report until released, so the second ask comes while the first is on its way.
  const held: ServerResponse[] = [];
  let arrived = (): void => {};
  const server = createServer((request: IncomingMessage, response) => {
    received.push(request.url ?? '');
    request.resume();
    held.push(response);
    arrived();
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.after(() => server.close());
  const clock = { now: 1_000_000 };
  const handled = { count: 0 };
  const app = await appFor(new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/r`), clock, handled);
  t.after(() => app.close());

  const first = app.inject({ method: 'POST', url: '/telemetry/send' });
  await new Promise<void>((resolve) => { arrived = resolve; });
  const second = app.inject({ method: 'POST', url: '/telemetry/send' });
  // The second ask reaches the route (its handler runs right after its hooks) before the report is answered.
  while (handled.count < 2) await new Promise(setImmediate);
  await new Promise(setImmediate);
  for (const response of held.splice(0)) response.end();
  const [a, b] = await Promise.all([first, second]);
  assert.equal(a.statusCode, 200, a.body);
  assert.equal(b.statusCode, 200, b.body);
  assert.deepEqual(a.json(), b.json());
  assert.equal(received.length, 1, 'one report for both asks');

  clock.now += 4_000;
  const soon = await app.inject({ method: 'POST', url: '/telemetry/send' });
  assert.equal(soon.statusCode, 429, soon.body);
  assert.equal(soon.headers['retry-after'], '6');
  assert.equal((soon.json() as { error: { code: string } }).error.code, 'telemetry_send_too_soon');
  assert.equal(received.length, 1);

  clock.now += 6_000;
  arrived = () => { for (const response of held.splice(0)) response.end(); };
  const later = await app.inject({ method: 'POST', url: '/telemetry/send' });
  assert.equal(later.statusCode, 200, later.body);
  assert.equal(received.length, 2);
});

test('an endpoint whose user info node:http cannot decode is a 502 telemetry_send_failed, not a 500', async (t) => {
  // new URL accepts it; config refuses it (telemetry-settings.test.ts), this is the send's own guard.
  const app = await appFor(new URL('http://a%zz:b@127.0.0.1:9/r'), { now: 0 });
  t.after(() => app.close());
  const answer = await app.inject({ method: 'POST', url: '/telemetry/send' });
  assert.equal(answer.statusCode, 502, answer.body);
  const error = (answer.json() as { error: { code: string; message: string } }).error;
  assert.equal(error.code, 'telemetry_send_failed');
  assert.match(error.message, /URI malformed/);
});
