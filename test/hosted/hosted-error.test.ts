import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { test } from 'node:test';
import { docsUrlFor, HOSTED_ERROR_CODES, hostedErrorBody, HostedError, toHostedError } from '../../src/hosted/hosted-error.ts';
import { headingId, renderHostedDocs } from '../../src/hosted/hosted-docs.ts';
import { ApiError } from '../../src/shared/api-error.ts';
import { buildTestHostedApp } from '../helpers/hosted-app-fixture.ts';

test('every docs_url the hosted tier can emit resolves to an element of the served docs page', async (t) => {
  const { app } = await buildTestHostedApp(t);
  const page = await app.inject({ url: '/docs/hosted' });
  assert.equal(page.statusCode, 200);
  assert.match(String(page.headers['content-type']), /^text\/html/);
  const ids = new Set([...page.body.matchAll(/\sid="([^"]+)"/g)].map((m) => m[1]));
  // Every registered code, and the fallback section for a code outside the registry.
  const urls = [...[...HOSTED_ERROR_CODES.keys()].map(docsUrlFor), docsUrlFor('some_code_nobody_registered')];
  for (const url of urls) {
    const [path, anchor] = url.split('#');
    assert.equal(path, '/docs/hosted', url);
    assert.ok(anchor !== undefined && ids.has(anchor), `${url}: no element with id '${anchor}' in the served docs`);
  }
  assert.ok(ids.has('service-and-errors'));
  assert.ok(ids.has('descriptors'));
});

test('docs rendering: heading ids from their text, markup and HTML escaped', () => {
  assert.equal(headingId('`svc_api_key_required`'.replace(/`/g, '')), 'svc_api_key_required');
  assert.equal(headingId('Service and errors'), 'service-and-errors');
  const html = renderHostedDocs('## A "quoted" <b>title</b>\n\ntext');
  assert.match(html, /<h2 id="a-quoted-title">/);
});

test('5xx bodies never echo what was thrown; deliberate ones keep their words', () => {
  const internal = hostedErrorBody(toHostedError(new Error('connect ECONNREFUSED 10.0.0.7:5432 password=x')));
  assert.deepEqual(internal, { error: { message: 'Internal server error.', type: 'server_error', code: 'internal_error', docs_url: '/docs/hosted#internal_error' } });
  const unknownCode = hostedErrorBody(new ApiError({ status: 502, type: 'server_error', code: 'weird_upstream_thing', message: 'upstream said: stack trace at /srv/app.js:12' }));
  assert.equal(unknownCode.error.message, 'The upstream hosted route is unavailable.');
  assert.equal(unknownCode.error.docs_url, '/docs/hosted#errors');
  const shutting = hostedErrorBody(new HostedError({ status: 503, type: 'server_error', code: 'server_shutting_down', message: 'The daemon is shutting down.' }));
  assert.equal(shutting.error.message, 'The daemon is shutting down.');
});

test('a rate-limit error carries retry_after_seconds in the error object', () => {
  const body = hostedErrorBody(new HostedError({ status: 429, type: 'rate_limit_error', code: 'rate_limit_exceeded', message: 'Slow down.', retryAfterSeconds: 2.2 }));
  assert.deepEqual(body, { error: { message: 'Slow down.', type: 'rate_limit_error', code: 'rate_limit_exceeded', docs_url: '/docs/hosted#rate_limit_exceeded', retry_after_seconds: 3 } });
});

/** Sends raw bytes to the server and returns everything it answers until it closes. */
function rawRequest(port: number, bytes: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let text = '';
    socket.on('data', (d) => { text += d.toString(); });
    socket.on('error', reject);
    socket.on('close', () => resolve(text));
    socket.end(bytes);
  });
}

test('on a real socket: oversized route headers and malformed HTTP get the hosted envelope', async (t) => {
  const { app } = await buildTestHostedApp(t);
  await app.listen({ port: 0, host: '127.0.0.1' });
  const port = (app.server.address() as { port: number }).port;

  const huge = await fetch(`http://127.0.0.1:${port}/api/v1/models`, { headers: { 'x-svc-project-id': 'p'.repeat(20_000) } });
  assert.equal(huge.status, 431);
  const body = await huge.json() as { error: Record<string, unknown> };
  assert.deepEqual(Object.keys(body.error).sort(), ['code', 'docs_url', 'message', 'type']);
  assert.equal(body.error.code, 'headers_too_large');
  assert.equal(body.error.docs_url, '/docs/hosted#headers_too_large');

  const garbage = await rawRequest(port, 'GET /api/v1/health HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n');
  assert.match(garbage, /^HTTP\/1\.1 400/);
  assert.match(garbage, /"docs_url":"\/docs\/hosted#invalid_http_request"/);

  const ok = await fetch(`http://127.0.0.1:${port}/api/v1/models`, { headers: { 'x-svc-max-joules': '9'.repeat(4000) } });
  assert.equal(ok.status, 200);
});
