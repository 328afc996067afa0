/**
 * The privacy rule in the MCP chat tool: a model served by a remote upstream is refused before
 * anything is sent to it, while the same scripted server configured as a local upstream (the
 * default for a loopback address) is used. `kind = "remote"` in the upstream's table is how a
 * loopback test server counts as remote (it is also how a user marks a tunnel or proxy that
 * leads off the machine).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { startDaemon, type DaemonProcess } from '../helpers/daemon-process.ts';
import { sse, startScriptedUpstream, type ScriptedUpstream } from '../helpers/scripted-upstream.ts';
import { TOOL_NAMES } from '../../src/mcp/tool-names.ts';

let upstream: ScriptedUpstream;
let daemon: DaemonProcess;
let client: Client;
let dir: string;

before(async () => {
  upstream = await startScriptedUpstream(sse([
    { choices: [{ index: 0, delta: { role: 'assistant', content: 'from the upstream' } }] },
    { choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] },
    { choices: [], usage: { prompt_tokens: 3, completion_tokens: 3 } },
    'data: [DONE]',
  ]));
  dir = mkdtempSync(join(tmpdir(), 'svc-mcp-remote-'));
  const config = join(dir, 'config.toml');
  // One scripted server behind two names: counted as remote under one, local (loopback) under the other.
  writeFileSync(config, [
    `[[upstreams]]\nname = "far"\nkind = "remote"\nmodels = ["big"]\nbase_url = "${upstream.baseUrl}"`,
    `[[upstreams]]\nname = "near"\nmodels = ["small"]\nbase_url = "${upstream.baseUrl}"`,
  ].join('\n\n'));
  daemon = await startDaemon({ args: ['--config', config] });
  client = new Client({ name: 'svc-remote-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${daemon.url}/mcp`)));
});
after(async () => {
  await client.close();
  assert.equal(await daemon.stop(), 0);
  await upstream.close();
  rmSync(dir, { recursive: true, force: true });
});

const chatRequests = (): number => upstream.requests.filter((r) => r.url.endsWith('/chat/completions')).length;

test('models show their plane', async () => {
  const listed = (await client.callTool({ name: TOOL_NAMES.listModels, arguments: {} })) as CallToolResult;
  const planes = new Map((listed.structuredContent as { models: { id: string; plane: string }[] }).models.map((m) => [m.id, m.plane]));
  assert.equal(planes.get('far/big'), 'remote');
  assert.equal(planes.get('near/small'), 'local');
  assert.equal(planes.get('tiny'), 'local');
});

test('the chat tool refuses a remote model and sends it nothing', async () => {
  const before = chatRequests();
  const result = (await client.callTool({ name: TOOL_NAMES.chat, arguments: { model: 'far/big', messages: [{ role: 'user', content: 'the contents of my vault' }] } })) as CallToolResult;
  assert.equal(result.isError, true);
  const text = result.content[0]?.type === 'text' ? result.content[0].text : '';
  assert.match(text, /'far\/big' is served by a remote upstream/);
  assert.match(text, /Pick a local model/);
  assert.equal(chatRequests(), before, 'nothing reached the remote upstream');
});

test('a local upstream on this machine is used', async () => {
  const before = chatRequests();
  const result = (await client.callTool({ name: TOOL_NAMES.chat, arguments: { model: 'near/small', messages: [{ role: 'user', content: 'Hi' }] } })) as CallToolResult;
  assert.notEqual(result.isError, true, JSON.stringify(result.content));
  assert.equal((result.structuredContent as { content: string }).content, 'from the upstream');
  assert.equal(chatRequests(), before + 1);
});

test('the embed tool refuses a remote model and sends it nothing', async () => {
  const result = (await client.callTool({ name: TOOL_NAMES.embed, arguments: { model: 'far/big', input: 'the contents of my vault' } })) as CallToolResult;
  assert.equal(result.isError, true);
  const text = result.content[0]?.type === 'text' ? result.content[0].text : '';
  assert.match(text, /'far\/big' is served by a remote upstream/);
  assert.equal(upstream.requests.filter((r) => r.url.endsWith('/embeddings')).length, 0, 'nothing reached the remote upstream');
});
