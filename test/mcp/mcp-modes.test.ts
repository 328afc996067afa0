/**
 * The `/mcp` settings on real daemons: stateless mode (`--mcp-stateless`), the session cap
 * (`--mcp-max-sessions`) and idle sessions closing (`--mcp-session-idle`).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { startDaemon, type DaemonProcess } from '../helpers/daemon-process.ts';
import { TOOL_NAMES } from '../../src/mcp/tool-names.ts';

const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
const initialize = JSON.stringify({
  jsonrpc: '2.0', id: 1, method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
});

async function connect(url: string): Promise<Client> {
  const client = new Client({ name: 'svc-modes-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`)));
  return client;
}

describe('stateless mode', () => {
  let daemon: DaemonProcess;
  before(async () => {
    daemon = await startDaemon({ args: ['--mcp-stateless'], withModel: false });
  });
  after(async () => {
    assert.equal(await daemon.stop(), 0);
  });

  test('the SDK client works without a session id', async () => {
    const client = await connect(daemon.url);
    try {
      const { tools } = await client.listTools();
      assert.equal(tools.length, Object.keys(TOOL_NAMES).length);
      const result = (await client.callTool({ name: TOOL_NAMES.solve, arguments: { solver: 'grover', problem: { type: 'qrng', bits: 8 }, shots: 1 } })) as CallToolResult;
      assert.notEqual(result.isError, true, JSON.stringify(result.content));
    } finally {
      await client.close();
    }
  });

  test('no session id is handed out; GET and DELETE are 405', async () => {
    const opened = await fetch(`${daemon.url}/mcp`, { method: 'POST', headers: MCP_HEADERS, body: initialize });
    assert.equal(opened.status, 200);
    assert.equal(opened.headers.get('mcp-session-id'), null);
    await opened.text();
    // Any request stands alone: tools/list needs no initialize first.
    const listed = await fetch(`${daemon.url}/mcp`, { method: 'POST', headers: { ...MCP_HEADERS, 'mcp-protocol-version': '2025-06-18' }, body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }) });
    assert.equal(listed.status, 200);
    assert.match(await listed.text(), /svc_health/);
    for (const method of ['GET', 'DELETE']) {
      const answer = await fetch(`${daemon.url}/mcp`, { method, headers: { accept: 'text/event-stream' } });
      assert.equal(answer.status, 405, method);
      assert.equal(((await answer.json()) as { error: { code: number } }).error.code, -32000);
    }
  });
});

describe('session cap and idle sessions', () => {
  let daemon: DaemonProcess;
  before(async () => {
    daemon = await startDaemon({ args: ['--mcp-max-sessions', '1', '--mcp-session-idle', '1s'], withModel: false });
  });
  after(async () => {
    assert.equal(await daemon.stop(), 0);
  });

  test('one session too many is a 503 that says why; an idle one closes and frees its place', async () => {
    const first = await fetch(`${daemon.url}/mcp`, { method: 'POST', headers: MCP_HEADERS, body: initialize });
    assert.equal(first.status, 200);
    const id = first.headers.get('mcp-session-id');
    assert.ok(id !== null);
    await first.text();

    const second = await fetch(`${daemon.url}/mcp`, { method: 'POST', headers: MCP_HEADERS, body: initialize });
    assert.equal(second.status, 503);
    assert.equal(second.headers.get('retry-after'), '5');
    assert.match(((await second.json()) as { error: { message: string } }).error.message, /at most 1 MCP sessions/);

    // Left alone, the session is closed by the idle sweep, which frees its place.
    let reopened: Response | undefined;
    for (let i = 0; i < 100; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      const attempt = await fetch(`${daemon.url}/mcp`, { method: 'POST', headers: MCP_HEADERS, body: initialize });
      await attempt.text();
      if (attempt.status === 200) {
        reopened = attempt;
        break;
      }
      assert.equal(attempt.status, 503);
    }
    assert.ok(reopened !== undefined, 'a new session opens once the idle one closed');
    const old = await fetch(`${daemon.url}/mcp`, { method: 'POST', headers: { ...MCP_HEADERS, 'mcp-session-id': id }, body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }) });
    assert.equal(old.status, 404);
    await old.text();
  });
});

describe('--mcp-port: /mcp on its own listener', () => {
  let daemon: DaemonProcess;
  let mcpUrl: string;
  before(async () => {
    daemon = await startDaemon({ args: ['--mcp-port', '0'], withModel: false });
    const started = daemon.logs.find((entry) => Array.isArray(entry.mcp_addresses));
    assert.ok(started !== undefined, 'the start-up line names the MCP addresses');
    mcpUrl = (started.mcp_addresses as string[])[0]!;
  });
  after(async () => {
    assert.equal(await daemon.stop(), 0);
  });

  test('tools work there and call the daemon; the daemon\'s port no longer serves /mcp, nor the MCP port the API', async () => {
    assert.notEqual(new URL(mcpUrl).port, String(daemon.port));
    const client = await connect(mcpUrl);
    try {
      const result = (await client.callTool({ name: TOOL_NAMES.listModels, arguments: {} })) as CallToolResult;
      assert.deepEqual((result.structuredContent as { models: { id: string }[] }).models.map((m) => m.id), ['svc-hashed-embed-v2']);
    } finally {
      await client.close();
    }
    assert.equal((await fetch(`${mcpUrl}/openai-tools`)).status, 200);
    const health = await (await fetch(`${daemon.url}/health`)).json() as { network: { mcp: string[]; loopback_only: boolean } };
    assert.equal(health.network.mcp[0], `${mcpUrl}/mcp`);
    assert.equal(health.network.loopback_only, true);
    assert.equal((await fetch(`${daemon.url}/mcp`, { method: 'POST', headers: MCP_HEADERS, body: initialize })).status, 404);
    assert.equal((await fetch(`${mcpUrl}/v1/models`)).status, 404);
    // The same loopback guard.
    const foreign = await fetch(`${mcpUrl}/mcp`, { method: 'POST', headers: { ...MCP_HEADERS, origin: 'http://evil.example' }, body: initialize });
    assert.equal(foreign.status, 403);
    // And the shared listener's charset guard and OPTIONS answer.
    const latin1 = await fetch(`${mcpUrl}/mcp`, { method: 'POST', headers: { ...MCP_HEADERS, 'content-type': 'application/json; charset=latin1' }, body: initialize });
    assert.equal(latin1.status, 415);
    await latin1.text();
    const options = await fetch(`${mcpUrl}/openai-tools`, { method: 'OPTIONS' });
    assert.match(options.headers.get('allow') ?? '', /GET/);
    await options.text();
  });
});
