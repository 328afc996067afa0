/**
 * The MCP server on a real daemon, through the SDK's own client over Streamable HTTP.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startDaemon, type DaemonProcess } from '../helpers/daemon-process.ts';
import { TOOL_NAMES } from '../../src/mcp/tool-names.ts';

let daemon: DaemonProcess;
let client: Client;

before(async () => {
  daemon = await startDaemon();
  client = new Client({ name: 'svc-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${daemon.url}/mcp`)));
});
after(async () => {
  await client.close();
  assert.equal(await daemon.stop(), 0);
});

describe('tools over Streamable HTTP', () => {
  test('lists every tool', async () => {
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((t) => t.name).sort(), Object.values(TOOL_NAMES).sort());
  });
  test('health', async () => {
    const result = await client.callTool({ name: TOOL_NAMES.health, arguments: {} });
    assert.notEqual(result.isError, true, JSON.stringify(result));
  });
});
