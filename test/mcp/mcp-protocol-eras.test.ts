/**
 * Every protocol revision svc's MCP server speaks, through the official SDK v2 client
 * (`@modelcontextprotocol/client`): 2026-07-28 (no handshake, no session, `server/discover`,
 * `subscriptions/listen`) and the 2025 eras it keeps serving (2025-11-25, 2025-06-18), on
 * `/mcp` of a daemon with sessions and of one with `--mcp-stateless`, and on `svc mcp` (stdio).
 * The SDK v1 client (2025-11-25 with sessions) is exercised by the other tests in this folder.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { Client, StreamableHTTPClientTransport, type CallToolResult } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { startDaemon, type DaemonProcess } from '../helpers/daemon-process.ts';
import { TOOL_NAMES } from '../../src/mcp/tool-names.ts';

const MODERN = '2026-07-28';
const MAIN = fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url));

type Era = { name: string; options: ConstructorParameters<typeof Client>[1]; version: string };
const ERAS: readonly Era[] = [
  { name: '2026-07-28', options: { versionNegotiation: { mode: { pin: MODERN } } }, version: MODERN },
  { name: '2026-07-28 found by probing (mode auto)', options: { versionNegotiation: { mode: 'auto' } }, version: MODERN },
  { name: '2025-11-25 (the client\'s legacy default)', options: {}, version: '2025-11-25' },
  { name: '2025-06-18', options: { supportedProtocolVersions: ['2025-06-18'] }, version: '2025-06-18' },
];

/** Every request the client makes, with the session header it carried (if any) and the answer's. */
function recordingFetch(seen: { sentSession: boolean; gotSession: boolean }[]): typeof fetch {
  return async (input, init) => {
    const response = await fetch(input, init);
    seen.push({ sentSession: new Headers(init?.headers).has('mcp-session-id'), gotSession: response.headers.has('mcp-session-id') });
    return response;
  };
}

function structured(result: CallToolResult): Record<string, unknown> {
  assert.notEqual(result.isError, true, JSON.stringify(result.content));
  const content = result.structuredContent;
  assert.ok(typeof content === 'object' && content !== null);
  return content as Record<string, unknown>;
}

for (const mode of [{ name: 'with sessions', args: [] as string[] }, { name: '--mcp-stateless', args: ['--mcp-stateless'] }]) {
  describe(`/mcp ${mode.name}, SDK v2 client`, () => {
    let daemon: DaemonProcess;
    before(async () => {
      daemon = await startDaemon({ args: mode.args });
      const created = await fetch(`${daemon.url}/api/spaces`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'notes' }) });
      assert.equal(created.status, 201);
    });
    after(async () => {
      assert.equal(await daemon.stop(), 0);
    });

    for (const era of ERAS) {
      test(`${era.name}: negotiates it, lists and calls tools, reads resources and the prompt`, async () => {
        const seen: { sentSession: boolean; gotSession: boolean }[] = [];
        const client = new Client({ name: 'svc-eras-test', version: '1.0.0' }, era.options);
        await client.connect(new StreamableHTTPClientTransport(new URL(`${daemon.url}/mcp`), { fetch: recordingFetch(seen) }));
        try {
          assert.equal(client.getNegotiatedProtocolVersion(), era.version);
          assert.equal(client.getServerVersion()?.name, 'svc');
          const tools = (await client.listTools()).tools.map((t) => t.name);
          assert.ok(tools.includes(TOOL_NAMES.health) && tools.includes(TOOL_NAMES.addToSpace), tools.join(', '));
          assert.equal(structured(await client.callTool({ name: TOOL_NAMES.health, arguments: {} })).status, 'ok');
          const added = structured(await client.callTool({ name: TOOL_NAMES.addToSpace, arguments: { space: 'notes', text: `Written by a ${era.name} client.` } }));
          const document = added.document as { id: string };
          const listed = (await client.listResources()).resources.map((r) => r.uri);
          const uri = `svc://spaces/notes/${document.id}`;
          assert.ok(listed.includes(uri), listed.join(', '));
          const read = await client.readResource({ uri });
          assert.deepEqual(read.contents.map((c) => ('text' in c ? c.text : '')), [`Written by a ${era.name} client.`]);
          const prompt = await client.getPrompt({ name: 'svc_answer_from_space', arguments: { space: 'notes', question: 'Who wrote this?' } });
          assert.match(JSON.stringify(prompt.messages), /Written by a/);
          // A tool's own refusal is a result with isError, in every era.
          const refused = await client.callTool({ name: TOOL_NAMES.searchSpace, arguments: { space: 'no-such-space', query: 'x' } });
          assert.equal(refused.isError, true);
        } finally {
          await client.close();
        }
        // 2026-07-28 has no session at all; a 2025 client gets one only where the daemon keeps sessions.
        const sessions = seen.some((r) => r.gotSession || r.sentSession);
        assert.equal(sessions, era.version !== MODERN && mode.args.length === 0, JSON.stringify(seen));
      });
    }

    test('2026-07-28: server/discover names the supported revisions and the server', async () => {
      const client = new Client({ name: 'svc-eras-test', version: '1.0.0' }, { versionNegotiation: { mode: { pin: MODERN } } });
      await client.connect(new StreamableHTTPClientTransport(new URL(`${daemon.url}/mcp`)));
      try {
        const discovered = await client.discover();
        assert.ok(discovered.supportedVersions.includes(MODERN), JSON.stringify(discovered));
        assert.ok(discovered.capabilities.tools !== undefined && discovered.capabilities.resources?.listChanged === true);
      } finally {
        await client.close();
      }
    });

    test('2026-07-28: subscriptions/listen carries resources/list_changed for a document added through the HTTP API', async () => {
      const client = new Client({ name: 'svc-eras-test', version: '1.0.0' }, { versionNegotiation: { mode: { pin: MODERN } } });
      let wake: () => void = () => {};
      const changed = new Promise<void>((resolve) => { wake = resolve; });
      client.setNotificationHandler('notifications/resources/list_changed', () => wake());
      await client.connect(new StreamableHTTPClientTransport(new URL(`${daemon.url}/mcp`)));
      try {
        const subscription = await client.listen({ resourcesListChanged: true });
        assert.equal(subscription.honoredFilter.resourcesListChanged, true);
        const response = await fetch(`${daemon.url}/api/spaces/notes/documents`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ text: `Heard on a listen stream (${mode.name}).` }) });
        assert.equal(response.status, 201);
        await changed;
        await subscription.close();
        assert.equal(await subscription.closed, 'local');
      } finally {
        await client.close();
      }
    });

    test('2026-07-28: a request naming a revision svc does not serve is refused with the supported list', async () => {
      const response = await fetch(`${daemon.url}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2099-01-01' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: { 'io.modelcontextprotocol/protocolVersion': '2099-01-01', 'io.modelcontextprotocol/clientCapabilities': {} } } }),
      });
      const body = await response.json() as { error?: { code: number; data?: { supported?: string[] } } };
      assert.equal(response.status, 400);
      assert.equal(body.error?.code, -32022, JSON.stringify(body));
      assert.ok(body.error.data?.supported?.includes(MODERN), JSON.stringify(body));
    });
  });
}

describe('svc mcp (stdio), SDK v2 client', () => {
  let daemon: DaemonProcess;
  before(async () => {
    daemon = await startDaemon();
  });
  after(async () => {
    assert.equal(await daemon.stop(), 0);
  });

  for (const era of ERAS.filter((e) => e.name !== '2026-07-28 found by probing (mode auto)')) {
    test(`${era.name}: negotiates it and calls a tool through the daemon`, async () => {
      const client = new Client({ name: 'svc-eras-stdio', version: '1.0.0' }, era.options);
      await client.connect(new StdioClientTransport({
        command: process.execPath,
        args: [MAIN, 'mcp'],
        cwd: join(MAIN, '../../..'),
        env: { ...process.env, SVC_URL: daemon.url } as Record<string, string>,
        stderr: 'ignore',
      }));
      try {
        assert.equal(client.getNegotiatedProtocolVersion(), era.version);
        assert.equal(structured(await client.callTool({ name: TOOL_NAMES.health, arguments: {} })).status, 'ok');
      } finally {
        await client.close();
      }
    });
  }
});
