/**
 * `svc mcp`, the stdio bridge, spawned as editors spawn it, driven by the SDK's own stdio
 * client: the same tools as `/mcp`, each calling the daemon at SVC_URL; with no daemon there,
 * tool calls are errors that say so and the bridge keeps running.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ResourceListChangedNotificationSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { runCliToEnd, startDaemon, type DaemonProcess } from '../helpers/daemon-process.ts';
import { answer, startScriptedUpstream } from '../helpers/scripted-upstream.ts';
import { freePort } from '../helpers/free-port.ts';
import { TOOL_NAMES } from '../../src/mcp/tool-names.ts';
import { exportDeveloperKeys } from '../../src/accounts/developer-keys/export-developer-keys.ts';
import { openHostedStore } from '../../src/accounts/store/open-hosted-store.ts';

const MAIN = fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url));

/** `svc mcp` with SVC_URL set, connected; stderr collected (stdout is the protocol's). */
async function bridge(url: string, env: Record<string, string> = {}): Promise<{ client: Client; stderr: () => string }> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [MAIN, 'mcp', '--log-level', 'info'],
    cwd: join(MAIN, '../../..'),
    env: { ...process.env, SVC_URL: url, ...env } as Record<string, string>,
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (d: Buffer) => { stderr += d.toString(); });
  const client = new Client({ name: 'svc-stdio-test', version: '1.0.0' });
  await client.connect(transport);
  return { client, stderr: () => stderr };
}

function textOf(result: CallToolResult): string {
  const text = result.content.find((c) => c.type === 'text');
  return text?.type === 'text' ? text.text : '';
}

describe('svc mcp with a daemon', () => {
  let daemon: DaemonProcess;
  let client: Client;
  let stderr: () => string;

  before(async () => {
    daemon = await startDaemon();
    ({ client, stderr } = await bridge(daemon.url));
  });
  after(async () => {
    await client.close();
    assert.equal(await daemon.stop(), 0);
  });

  test('lists the same tools and prompt as /mcp', async () => {
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((t) => t.name).sort(), Object.values(TOOL_NAMES).sort());
    const openai = await (await fetch(`${daemon.url}/openai-tools`)).json() as { tools: { function: { name: string } }[] };
    assert.deepEqual(tools.map((t) => t.name), openai.tools.map((t) => t.function.name));
    assert.deepEqual((await client.listPrompts()).prompts.map((p) => p.name), ['svc_answer_from_space']);
  });

  test('calls every tool through the daemon', async () => {
    const health = (await client.callTool({ name: TOOL_NAMES.health, arguments: {} })) as CallToolResult;
    assert.equal((health.structuredContent as { status: string }).status, 'ok');

    const chat = (await client.callTool({ name: TOOL_NAMES.chat, arguments: { model: 'tiny', messages: [{ role: 'user', content: 'Hi' }], max_tokens: 4 } })) as CallToolResult;
    assert.notEqual(chat.isError, true, textOf(chat));
    assert.equal((chat.structuredContent as { model: string }).model, 'tiny');

    const created = await fetch(`${daemon.url}/api/spaces`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'bridge' }) });
    assert.equal(created.status, 201);
    const changed = new Promise<void>((resolve) => client.setNotificationHandler(ResourceListChangedNotificationSchema, () => resolve()));
    const added = (await client.callTool({ name: TOOL_NAMES.addToSpace, arguments: { space: 'bridge', text: 'Stdio bridges speak JSON-RPC on stdout.' } })) as CallToolResult;
    assert.equal((added.structuredContent as { created: boolean }).created, true);
    await changed;
    const found = (await client.callTool({ name: TOOL_NAMES.searchSpace, arguments: { space: 'bridge', query: 'stdout' } })) as CallToolResult;
    assert.match((found.structuredContent as { results: { text: string }[] }).results[0]?.text ?? '', /JSON-RPC on stdout/);
    const { resources } = await client.listResources();
    assert.ok(resources.some((r) => r.uri.startsWith('svc://spaces/bridge/')));

    const spaces = (await client.callTool({ name: TOOL_NAMES.listSpaces, arguments: {} })) as CallToolResult;
    assert.ok((spaces.structuredContent as { spaces: { name: string }[] }).spaces.some((space) => space.name === 'bridge'), textOf(spaces));
    const everywhere = (await client.callTool({ name: TOOL_NAMES.searchSpaces, arguments: { query: 'stdout', mode: 'bm25' } })) as CallToolResult;
    assert.equal((everywhere.structuredContent as { results: { space: string }[] }).results[0]?.space, 'bridge', textOf(everywhere));

    const models = (await client.callTool({ name: TOOL_NAMES.listModels, arguments: {} })) as CallToolResult;
    assert.ok((models.structuredContent as { models: { id: string }[] }).models.some((m) => m.id === 'tiny'), textOf(models));
    const embedded = (await client.callTool({ name: TOOL_NAMES.embed, arguments: { model: 'svc-hashed-embed-v2', input: 'stdio' } })) as CallToolResult;
    assert.notEqual(embedded.isError, true, textOf(embedded));

    const solved = (await client.callTool({ name: TOOL_NAMES.solve, arguments: { solver: 'grover', problem: { type: 'qrng', bits: 8 }, shots: 1 } })) as CallToolResult;
    assert.equal((solved.structuredContent as { status: string }).status, 'completed');
    const batch = (await client.callTool({ name: TOOL_NAMES.solveBatch, arguments: { solver: 'grover', problems: [{ type: 'qrng', bits: 8 }, { type: 'qrng', bits: 8 }], shots: 1 } })) as CallToolResult;
    assert.deepEqual((batch.structuredContent as { results: { index: number }[] }).results.map((r) => r.index), [0, 1], textOf(batch));
  });

  test('documents added through the daemon\'s HTTP API reach the bridge\'s client as list_changed', async () => {
    let heard = 0;
    client.setNotificationHandler(ResourceListChangedNotificationSchema, () => {
      heard++;
    });
    await fetch(`${daemon.url}/api/spaces`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'elsewhere' }) });
    // The bridge opens its session with the daemon in the background: add until one is heard.
    for (let i = 0; i < 40 && heard === 0; i++) {
      const added = await fetch(`${daemon.url}/api/spaces/elsewhere/documents`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ text: `Added over HTTP, number ${i}.` }) });
      assert.equal(added.status, 201);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    assert.ok(heard > 0, 'an addition made outside the bridge was announced to its client');
    const { resources } = await client.listResources();
    assert.ok(resources.some((r) => r.uri.startsWith('svc://spaces/elsewhere/')));
  });

  test('logs go to stderr, by tool name and outcome only, never arguments', async () => {
    await client.callTool({ name: TOOL_NAMES.embed, arguments: { model: 'svc-hashed-embed-v2', input: 'a secret-looking sentence' } });
    // The log line is written after the answer; wait for it (a few ms).
    for (let i = 0; i < 200 && !stderr().includes('"tool":"svc_embed"'); i++) await new Promise((resolve) => setTimeout(resolve, 25));
    assert.match(stderr(), /"tool":"svc_embed"/);
    assert.doesNotMatch(stderr(), /secret-looking/);
  });
});

describe('svc mcp without a daemon', () => {
  test('tool calls are errors that say the daemon is unreachable, and the bridge keeps serving', async () => {
    const url = `http://127.0.0.1:${await freePort()}`;
    const { client } = await bridge(url);
    try {
      for (const name of [TOOL_NAMES.health, TOOL_NAMES.listSpaces]) {
        const result = (await client.callTool({ name, arguments: {} })) as CallToolResult;
        assert.equal(result.isError, true);
        assert.match(textOf(result), new RegExp(`daemon at ${url.replace(/\./g, '\\.')} is unreachable`));
        assert.match(textOf(result), /svc serve/);
      }
      assert.equal((await client.listTools()).tools.length, Object.keys(TOOL_NAMES).length);
    } finally {
      await client.close();
    }
  });
});

describe('svc mcp: where tool input goes', () => {
  test('a daemon off this machine is refused with exit 2, unless --allow-remote-daemon', async () => {
    const refused = await runCliToEnd(['mcp'], { SVC_URL: 'http://192.0.2.10:11435' });
    assert.equal(refused.code, 2, refused.stderr);
    assert.match(refused.stderr, /http:\/\/192\.0\.2\.10:11435 is not on this machine/);
    assert.match(refused.stderr, /--allow-remote-daemon/);
    assert.equal(refused.stdout, '', 'stdout is the protocol\'s');
    const { client } = await bridge('http://192.0.2.10:11435', { SVC_MCP_ALLOW_REMOTE_DAEMON: '1' });
    try {
      assert.equal((await client.listTools()).tools.length, Object.keys(TOOL_NAMES).length);
    } finally {
      await client.close();
    }
  });

  test('SVC_API_KEY goes with each call; a model whose plane the answer omits gets no tool input', async () => {
    // Not svc (or an older one): every answer is the same, with no `plane` for any model.
    const server = await startScriptedUpstream(answer(200, { status: 'ok', id: 'm' }));
    const { client } = await bridge(server.baseUrl, { SVC_API_KEY: 'svc_dk_bridge_test' });
    try {
      const health = (await client.callTool({ name: TOOL_NAMES.health, arguments: {} })) as CallToolResult;
      assert.notEqual(health.isError, true, textOf(health));
      // Every request carries the key: the tools' calls and the bridge's change-listening session.
      assert.ok(server.requests.length > 0);
      for (const request of server.requests) assert.equal(request.headers.authorization, 'Bearer svc_dk_bridge_test');
      for (const [name, args] of [[TOOL_NAMES.embed, { model: 'm', input: 'my notes' }], [TOOL_NAMES.chat, { model: 'm', messages: [{ role: 'user', content: 'my notes' }] }]] as const) {
        const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
        assert.equal(result.isError, true, name);
        assert.match(textOf(result), /does not say where model 'm' runs/);
      }
      // The only POSTs are the bridge's attempts to open its change-listening MCP session.
      assert.deepEqual(server.requests.filter((r) => r.method === 'POST' && !r.url.endsWith('/mcp')).map((r) => r.url), [], 'no tool input was sent');
    } finally {
      await client.close();
      await server.close();
    }
  });
});

describe('svc mcp and a daemon that requires a developer key', () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-mcp-devkey-'));
  let daemon: DaemonProcess;
  let secret = '';

  before(async () => {
    const store = await openHostedStore({ dataDir: join(dir, 'hosted') });
    const account = await store.createAccount({ name: 'Developer', plan: { monthlyJouleAllowance: 0, hostedEntitlement: false, enterprise: false } });
    secret = (await store.issueKey(account.id, { scope: 'developer_runtime', name: 'bridge', project: null })).secret;
    const keyFile = join(dir, 'developer-keys.json');
    writeFileSync(keyFile, JSON.stringify(await exportDeveloperKeys(store, account.id)));
    await store.close();
    daemon = await startDaemon({ withModel: false, args: ['--developer-keys', keyFile, '--require-developer-key'] });
  });
  after(async () => {
    assert.equal(await daemon.stop(), 0);
    rmSync(dir, { recursive: true, force: true });
  });

  test('tool calls go through with SVC_API_KEY, and say 401 without it', async () => {
    const keyed = await bridge(daemon.url, { SVC_API_KEY: secret });
    const bare = await bridge(daemon.url, { SVC_API_KEY: '' });
    try {
      const listed = (await keyed.client.callTool({ name: TOOL_NAMES.listSpaces, arguments: {} })) as CallToolResult;
      assert.notEqual(listed.isError, true, textOf(listed));
      assert.deepEqual((listed.structuredContent as { spaces: unknown[] }).spaces, []);
      const refused = (await bare.client.callTool({ name: TOOL_NAMES.listSpaces, arguments: {} })) as CallToolResult;
      assert.equal(refused.isError, true);
      assert.match(textOf(refused), /developer_key_required, HTTP 401/);
    } finally {
      await Promise.all([keyed.client.close(), bare.client.close()]);
    }
  });
});
