/**
 * An MCP session belongs to the caller that opened it: on `svc serve --developer-keys`, a
 * session opened with key A is used and ended only with key A. Key B, no key at all, or a key on
 * a session opened without one get 404 (as an unknown id: the session's existence is not told)
 * on POST, on GET (the SSE stream) and on DELETE; the owner's session goes on working.
 * Through the MCP SDK's own client over Streamable HTTP.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { openHostedStore } from '../../src/accounts/store/open-hosted-store.ts';
import { startDaemon, type DaemonProcess } from '../helpers/daemon-process.ts';

const FREE = { monthlyJouleAllowance: 0, hostedEntitlement: false, enterprise: false };

const dir = mkdtempSync(join(tmpdir(), 'svc-mcp-owner-'));
let daemon: DaemonProcess;
let keyA = '';
let keyB = '';
let keyOtherAccount = '';
const clients: Client[] = [];

before(async () => {
  const store = await openHostedStore({ dataDir: dir });
  try {
    const account = await store.createAccount({ name: 'Owner', plan: FREE });
    keyA = (await store.issueKey(account.id, { scope: 'developer_runtime', name: 'a' })).secret;
    keyB = (await store.issueKey(account.id, { scope: 'developer_runtime', name: 'b' })).secret;
    const other = await store.createAccount({ name: 'Other', plan: FREE });
    keyOtherAccount = (await store.issueKey(other.id, { scope: 'developer_runtime' })).secret;
  } finally {
    await store.close();
  }
  // Keys are checked but not required: callers without one are anonymous.
  daemon = await startDaemon({ withModel: false, args: ['--developer-keys', dir] });
});
after(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => {})));
  await daemon?.stop();
  rmSync(dir, { recursive: true, force: true });
});

function headers(key: string | undefined): Record<string, string> {
  return key === undefined ? {} : { authorization: `Bearer ${key}` };
}

/** A client that opens its own session (initialize) as `key`. */
async function open(key: string | undefined): Promise<{ client: Client; transport: StreamableHTTPClientTransport; sessionId: string }> {
  const client = new Client({ name: 'svc-owner-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${daemon.url}/mcp`), { requestInit: { headers: headers(key) } });
  await client.connect(transport);
  clients.push(client);
  assert.ok(transport.sessionId !== undefined);
  return { client, transport, sessionId: transport.sessionId };
}

/** A client that joins an existing session by its id (the SDK's reconnect: no initialize) as `key`. */
async function joinSession(sessionId: string, key: string | undefined): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const client = new Client({ name: 'svc-intruder', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${daemon.url}/mcp`), { sessionId, requestInit: { headers: headers(key) } });
  transport.setProtocolVersion(LATEST_PROTOCOL_VERSION);
  await client.connect(transport);
  clients.push(client);
  return { client, transport };
}

function is404(error: unknown): boolean {
  return error instanceof StreamableHTTPError && error.code === 404;
}

/** GET /mcp (the server-to-client SSE stream) on `sessionId` as `key`: the status, body left unread. */
async function sseStatus(sessionId: string, key: string | undefined): Promise<number> {
  const response = await fetch(`${daemon.url}/mcp`, {
    headers: { accept: 'text/event-stream', 'mcp-session-id': sessionId, 'mcp-protocol-version': LATEST_PROTOCOL_VERSION, ...headers(key) },
  });
  await response.body?.cancel();
  return response.status;
}

/** Every way in for `key` on `sessionId` is refused with 404: a request, the SSE stream, and ending it. */
async function assertShutOut(sessionId: string, key: string | undefined, who: string): Promise<void> {
  const intruder = await joinSession(sessionId, key);
  await assert.rejects(intruder.client.listTools(), is404, `${who}: tools/list`);
  await assert.rejects(intruder.client.callTool({ name: 'svc_list_models', arguments: {} }), is404, `${who}: tools/call`);
  assert.equal(await sseStatus(sessionId, key), 404, `${who}: GET`);
  await assert.rejects(intruder.transport.terminateSession(), is404, `${who}: DELETE`);
}

test('a session opened with key A is refused to key B, to another account\'s key and to no key, on POST, GET and DELETE; A goes on using it', async () => {
  const owner = await open(keyA);
  const before = (await owner.client.listTools()).tools.length;
  assert.ok(before > 0);
  await assertShutOut(owner.sessionId, keyB, 'key B');
  await assertShutOut(owner.sessionId, keyOtherAccount, 'another account\'s key');
  await assertShutOut(owner.sessionId, undefined, 'no key');
  // Not ended by any of those DELETEs, and every way still open to its owner.
  assert.equal((await owner.client.listTools()).tools.length, before);
  // The owner's client holds the session's one SSE stream already: a second is 409, past the owner check.
  assert.equal(await sseStatus(owner.sessionId, keyA), 409);
  const again = await joinSession(owner.sessionId, keyA);
  assert.equal((await again.client.listTools()).tools.length, before);
  await owner.transport.terminateSession();
  await assert.rejects(again.client.listTools(), is404, 'ended by its owner');
});

test('a session opened without a key is refused to a caller with a key, and still serves callers without one', async () => {
  const anonymous = await open(undefined);
  await assertShutOut(anonymous.sessionId, keyA, 'key A');
  assert.ok((await anonymous.client.listTools()).tools.length > 0);
  // `none` is the contract's "no key": the same anonymous caller.
  const none = await joinSession(anonymous.sessionId, 'none');
  assert.ok((await none.client.listTools()).tools.length > 0);
  await anonymous.transport.terminateSession();
});
