/**
 * MCP logging on a real daemon, through the SDK's own client: the server declares `logging`,
 * answers `logging/setLevel`, and sends each tool call's line (tool, duration, outcome) as a
 * log notification at or above the level the client chose, never its arguments or results.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { LoggingMessageNotificationSchema, type LoggingMessageNotification } from '@modelcontextprotocol/sdk/types.js';
import { startDaemon, type DaemonProcess } from '../helpers/daemon-process.ts';
import { TOOL_NAMES } from '../../src/mcp/tool-names.ts';

let daemon: DaemonProcess;
let client: Client;
const received: LoggingMessageNotification['params'][] = [];
let onMessage = (): void => {};

before(async () => {
  daemon = await startDaemon();
  client = new Client({ name: 'svc-logging-test', version: '1.0.0' });
  client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => {
    received.push(notification.params);
    onMessage();
  });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${daemon.url}/mcp`)));
});

after(async () => {
  await client.close();
  assert.equal(await daemon.stop(), 0);
});

/** Resolves once a log notification about `tool` has arrived. */
function lineAbout(tool: string): Promise<LoggingMessageNotification['params']> {
  return new Promise((resolve) => {
    const check = (): void => {
      const found = received.find((p) => (p.data as { tool?: string }).tool === tool);
      if (found !== undefined) resolve(found);
    };
    onMessage = check;
    check();
  });
}

test('the server declares logging and a tool call is logged to the client without its content', async () => {
  assert.ok(client.getServerCapabilities()?.logging, 'logging capability');
  assert.deepEqual(await client.setLoggingLevel('info'), {});
  const query = 'a private query 8c1f';
  await client.callTool({ name: TOOL_NAMES.health, arguments: {} });
  const failed = await client.callTool({ name: TOOL_NAMES.searchSpace, arguments: { space: 'no-such-space', query } });
  assert.equal(failed.isError, true);
  const ok = await lineAbout(TOOL_NAMES.health);
  assert.equal(ok.level, 'info');
  assert.equal((ok.data as { ok: boolean }).ok, true);
  const refused = await lineAbout(TOOL_NAMES.searchSpace);
  assert.equal(refused.level, 'warning');
  assert.equal((refused.data as { ok: boolean }).ok, false);
  assert.ok(!JSON.stringify(received).includes(query), 'a log notification carries a tool argument');
});

test('logging/setLevel filters: at warning, a successful call sends nothing, a failed one its warning', async () => {
  received.length = 0;
  await client.setLoggingLevel('warning');
  await client.callTool({ name: TOOL_NAMES.health, arguments: {} });
  await client.callTool({ name: TOOL_NAMES.searchSpace, arguments: { space: 'no-such-space', query: 'q' } });
  // Notifications arrive in order on one stream: had the info line been sent, it would be here first.
  await lineAbout(TOOL_NAMES.searchSpace);
  assert.deepEqual(received.map((p) => p.level), ['warning']);
});
