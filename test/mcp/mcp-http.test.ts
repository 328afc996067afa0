/**
 * The MCP server on a real daemon with the tiny fixture model, through the SDK's own client over
 * Streamable HTTP: every tool called for real, results checked against the output schemas the
 * server lists, resources and their change notifications, the prompt, sessions and the
 * transport's security and error answers.
 */
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ResourceListChangedNotificationSchema, type CallToolResult, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { startDaemon, type DaemonProcess } from '../helpers/daemon-process.ts';
import { TOOL_NAMES } from '../../src/mcp/tool-names.ts';

let daemon: DaemonProcess;
let client: Client;
let tools: Map<string, Tool>;

before(async () => {
  daemon = await startDaemon();
  client = new Client({ name: 'svc-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${daemon.url}/mcp`)));
  tools = new Map((await client.listTools()).tools.map((t) => [t.name, t]));
  const created = await fetch(`${daemon.url}/api/spaces`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'notes' }) });
  assert.equal(created.status, 201);
});
after(async () => {
  await client.close();
  assert.equal(await daemon.stop(), 0);
});

/** Calls a tool that must succeed; its structuredContent must match the outputSchema the server listed. */
async function call(name: string, args: Record<string, unknown>): Promise<Record<string, unknown>> {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
  assert.notEqual(result.isError, true, `${name}: ${JSON.stringify(result.content)}`);
  const structured = result.structuredContent;
  assert.ok(structured !== undefined, `${name} returns structuredContent`);
  const outputSchema = tools.get(name)?.outputSchema;
  assert.ok(outputSchema !== undefined, `${name} lists an outputSchema`);
  const parsed = z.fromJSONSchema(outputSchema as Parameters<typeof z.fromJSONSchema>[0]).safeParse(structured);
  assert.ok(parsed.success, `${name}: ${parsed.error?.message}`);
  // The same result as JSON text, for clients that read only content.
  const text = result.content.find((c) => c.type === 'text');
  assert.deepEqual(JSON.parse(text?.type === 'text' ? text.text : 'null'), structured);
  return structured;
}

async function callError(name: string, args: Record<string, unknown>): Promise<string> {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
  assert.equal(result.isError, true, `${name} should fail: ${JSON.stringify(result)}`);
  const text = result.content.find((c) => c.type === 'text');
  return text?.type === 'text' ? text.text : '';
}

interface RawAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** node:http, so Host and Origin can be anything (fetch will not send a forged Host). */
function raw(method: string, path: string, headers: Record<string, string>, body?: string): Promise<RawAnswer> {
  const url = new URL(path, daemon.url);
  return new Promise((resolve, reject) => {
    let answered = false;
    const req = httpRequest({ host: url.hostname, port: url.port, path: url.pathname, method, headers }, (res) => {
      answered = true;
      let text = '';
      res.on('data', (chunk: Buffer) => { text += chunk.toString(); });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
    });
    // A body refused by its Content-Length is answered unread, and the upload cut off.
    req.on('error', (error: NodeJS.ErrnoException) => { if (error.code !== 'EPIPE' && error.code !== 'ECONNRESET') reject(error); });
    req.on('close', () => { if (!answered) reject(new Error('connection closed without a response')); });
    req.end(body);
  });
}

const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
const initialize = JSON.stringify({
  jsonrpc: '2.0', id: 1, method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
});

/** The JSON-RPC message of an answer sent as JSON or as one SSE event. */
function rpcOf(answer: RawAnswer): { error?: { code: number; message: string }; result?: unknown } {
  const data = answer.body.split('\n').find((line) => line.startsWith('data: '));
  return JSON.parse(data === undefined ? answer.body : data.slice(6)) as { error?: { code: number; message: string } };
}

describe('tool list', () => {
  test('every tool, with title, schemas and closed-world annotations', () => {
    assert.deepEqual([...tools.keys()].sort(), Object.values(TOOL_NAMES).sort());
    for (const tool of tools.values()) {
      assert.ok(tool.title !== undefined && tool.description !== undefined, tool.name);
      assert.equal(tool.inputSchema.type, 'object');
      assert.equal(tool.outputSchema?.type, 'object');
      assert.equal(tool.annotations?.openWorldHint, false, tool.name);
      assert.equal(tool.annotations?.destructiveHint, false, tool.name);
      assert.equal(typeof tool.annotations?.idempotentHint, 'boolean', tool.name);
    }
    assert.equal(tools.get(TOOL_NAMES.addToSpace)?.annotations?.readOnlyHint, false);
    for (const name of [TOOL_NAMES.health, TOOL_NAMES.listModels, TOOL_NAMES.searchSpace, TOOL_NAMES.solve]) {
      assert.equal(tools.get(name)?.annotations?.readOnlyHint, true, name);
    }
  });

  test('input schemas are the HTTP API\'s: strict objects with its fields and limits', () => {
    const chat = tools.get(TOOL_NAMES.chat)!.inputSchema as unknown as { properties: Record<string, unknown>; required: string[]; additionalProperties: unknown };
    assert.deepEqual([...chat.required].sort(), ['messages', 'model']);
    assert.equal(chat.additionalProperties, false);
    assert.equal(chat.properties.stream, undefined, 'the tool does not stream');
    const solve = tools.get(TOOL_NAMES.solve)!.inputSchema as unknown as { properties: { solver: { enum: string[] }; shots: { maximum: number } } };
    assert.deepEqual(solve.properties.solver.enum, ['qaoa', 'grover', 'qkmeans', 'qsvm', 'qubo']);
    assert.equal(solve.properties.shots.maximum, 65536);
  });
});

describe('tool calls against the daemon', () => {
  test('health and models', async () => {
    const health = await call(TOOL_NAMES.health, {});
    assert.equal(health.status, 'ok');
    const { models } = await call(TOOL_NAMES.listModels, {}) as { models: { id: string; plane: string }[] };
    assert.deepEqual(models.map((m) => [m.id, m.plane]), [['tiny', 'local'], ['svc-hashed-embed-v2', 'local']]);
  });

  test('chat with the tiny local model', async () => {
    const reply = await call(TOOL_NAMES.chat, { model: 'tiny', messages: [{ role: 'user', content: 'Hello' }], max_tokens: 6, seed: 1 }) as { model: string; content: string; usage: { completion_tokens: number } };
    assert.equal(reply.model, 'tiny');
    assert.ok(reply.usage.completion_tokens >= 1 && reply.usage.completion_tokens <= 6);
  });

  test('embed', async () => {
    const out = await call(TOOL_NAMES.embed, { model: 'svc-hashed-embed-v2', input: ['pump seal', 'impeller'] }) as { embeddings: number[][] };
    assert.equal(out.embeddings.length, 2);
    assert.ok(out.embeddings[0]!.length > 0);
    assert.notDeepEqual(out.embeddings[0], out.embeddings[1]);
  });

  test('add to a space, list, search one and all', async () => {
    const added = await call(TOOL_NAMES.addToSpace, { space: 'notes', text: 'The impeller seal is replaced every 2000 hours of running.', title: 'Pump manual', metadata: { kind: 'manual' } }) as { created: boolean; document: { id: string; title: string } };
    assert.equal(added.created, true);
    assert.equal(added.document.title, 'Pump manual');
    const again = await call(TOOL_NAMES.addToSpace, { space: 'notes', text: 'The impeller seal is replaced every 2000 hours of running.' }) as { created: boolean; document: { id: string } };
    assert.equal(again.created, false, 'the same text is the same document');
    assert.equal(again.document.id, added.document.id);

    const { spaces } = await call(TOOL_NAMES.listSpaces, {}) as { spaces: { name: string; document_count: number }[] };
    assert.ok(spaces.some((s) => s.name === 'notes' && s.document_count >= 1));

    const one = await call(TOOL_NAMES.searchSpace, { space: 'notes', query: 'impeller seal', filter: { metadata: { kind: 'manual' } } }) as { space: string; results: { document_id: string; text: string }[] };
    assert.equal(one.space, 'notes');
    assert.equal(one.results[0]?.document_id, added.document.id);
    const all = await call(TOOL_NAMES.searchSpaces, { query: 'impeller', mode: 'bm25' }) as { mode: string; results: { space: string }[] };
    assert.equal(all.mode, 'bm25');
    assert.equal(all.results[0]?.space, 'notes');

    // Chat grounded in the space: the passages it was given come back as numbered citations.
    const grounded = await call(TOOL_NAMES.chat, { model: 'tiny', messages: [{ role: 'user', content: 'How often is the impeller seal replaced?' }], spaces: ['notes'], max_tokens: 4 }) as { citations?: { index: number; document_id: string }[] };
    assert.equal(grounded.citations?.[0]?.index, 1);
    assert.equal(grounded.citations[0].document_id, added.document.id);
  });

  test('solve and solve batch on the simulator', async () => {
    const single = await call(TOOL_NAMES.solve, { solver: 'grover', problem: { type: 'qrng', bits: 16, format: 'hex' }, shots: 1, seed: 7 }) as { solver: string; status: string; solution: { value?: string } };
    assert.equal(single.solver, 'grover');
    assert.equal(single.status, 'completed');
    const batch = await call(TOOL_NAMES.solveBatch, { solver: 'grover', problems: [{ type: 'qrng', bits: 8 }, { type: 'qrng', bits: 8 }], shots: 1 }) as { results: { index: number }[] };
    assert.deepEqual(batch.results.map((r) => r.index), [0, 1]);
  });

  test('bad input is a tool error naming the field, not a protocol failure', async () => {
    assert.match(await callError(TOOL_NAMES.solve, { solver: 'nope', problem: { type: 'qrng', bits: 8 } }), /solver/);
    assert.match(await callError(TOOL_NAMES.addToSpace, { space: 'notes', text: 'x', surprise: 1 }), /surprise|unrecognized/i);
    assert.match(await callError(TOOL_NAMES.solve, { solver: 'grover', problem: { type: 'qrng', bits: 8 }, shot: 1 }), /shot|unrecognized/i);
    assert.match(await callError(TOOL_NAMES.solveBatch, { solver: 'grover', problems: [{ type: 'qrng', bits: 8 }], sead: 1 }), /sead|unrecognized/i);
    // Past the schema, the runtime's own checks answer (a 4xx becomes the tool error).
    assert.match(await callError(TOOL_NAMES.solve, { solver: 'qaoa', problem: { type: 'qrng', bits: 8 } }), /solves 'route_optimization'.*HTTP 422/);
    assert.match(await callError(TOOL_NAMES.searchSpace, { space: 'absent', query: 'x' }), /^svc_search_space: No space named .absent.\. \(space_not_found, HTTP 404\)$/);
    assert.match(await callError(TOOL_NAMES.chat, { model: 'no-such-model', messages: [{ role: 'user', content: 'Hi' }] }), /No model 'no-such-model'/);
    // The session still works afterwards.
    assert.equal((await call(TOOL_NAMES.health, {})).status, 'ok');
  });
});

describe('resources and the prompt', () => {
  test('documents are listed and readable as svc://spaces/<space>/<id>', async () => {
    const added = await call(TOOL_NAMES.addToSpace, { space: 'notes', text: '# Valves\n\nCheck the relief valve monthly.', format: 'markdown', title: 'Valves' }) as { document: { id: string } };
    const uri = `svc://spaces/notes/${added.document.id}`;
    const { resources } = await client.listResources();
    const listed = resources.find((r) => r.uri === uri);
    assert.ok(listed !== undefined, JSON.stringify(resources));
    assert.equal(listed.mimeType, 'text/markdown');
    assert.equal(listed.title, 'Valves');
    const read = await client.readResource({ uri });
    const content = read.contents[0] as { text: string; mimeType: string };
    assert.match(content.text, /relief valve monthly/);
    assert.equal(content.mimeType, 'text/markdown');
    // A malformed %-escape is the client's invalid params, not an internal error.
    await assert.rejects(client.readResource({ uri: 'svc://spaces/%E0%A4%A/x' }), (error: { code?: number }) => error.code === -32602);
    const { resourceTemplates } = await client.listResourceTemplates();
    assert.deepEqual(resourceTemplates.map((t) => t.uriTemplate), ['svc://spaces/{space}/{document}']);
  });

  test('adding a document, by tool or by the HTTP API, sends resources/list_changed', async () => {
    let notified = 0;
    let wake: () => void = () => {};
    client.setNotificationHandler(ResourceListChangedNotificationSchema, () => {
      notified++;
      wake();
    });
    const next = (): Promise<void> => new Promise((resolve) => { wake = resolve; });

    let waiting = next();
    await call(TOOL_NAMES.addToSpace, { space: 'notes', text: 'Grease the bearings every week.' });
    await waiting;
    const afterTool = notified;

    waiting = next();
    const response = await fetch(`${daemon.url}/api/spaces/notes/documents`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ text: 'Drain the sump after each season.' }) });
    assert.equal(response.status, 201);
    await waiting;
    assert.ok(notified > afterTool);
  });

  test('the answer-from-a-space prompt quotes numbered passages and asks for [n] citations', async () => {
    const { prompts } = await client.listPrompts();
    assert.deepEqual(prompts.map((p) => [p.name, (p.arguments ?? []).map((a) => a.name)]), [['svc_answer_from_space', ['space', 'question']]]);
    const prompt = await client.getPrompt({ name: 'svc_answer_from_space', arguments: { space: 'notes', question: 'How often is the impeller seal replaced?' } });
    const message = prompt.messages[0]!;
    assert.equal(message.role, 'user');
    const text = message.content.type === 'text' ? message.content.text : '';
    assert.match(text, /Question: How often is the impeller seal replaced\?/);
    assert.match(text, /\[1\] \(Pump manual\)\nThe impeller seal is replaced every 2000 hours/);
    assert.match(text, /\[n\]/);
  });
});

describe('/openai-tools', () => {
  test('the same tools as OpenAI functions: valid names, the MCP descriptions and fields, bounds as text', async () => {
    const response = await fetch(`${daemon.url}/openai-tools`);
    assert.equal(response.status, 200);
    const body = await response.json() as { tools: { type: string; function: { name: string; description: string; parameters: Record<string, unknown> } }[] };
    assert.deepEqual(body.tools.map((t) => t.function.name), [...tools.keys()]);
    for (const tool of body.tools) {
      assert.equal(tool.type, 'function');
      assert.match(tool.function.name, /^[a-zA-Z0-9_-]{1,64}$/);
      const parameters = tool.function.parameters as { type: string; properties: Record<string, unknown>; required?: string[]; $schema?: string };
      assert.equal(parameters.type, 'object');
      assert.equal(parameters.$schema, undefined);
      const listed = tools.get(tool.function.name)!;
      assert.equal(tool.function.description, listed.description);
      assert.deepEqual(Object.keys(parameters.properties), Object.keys(listed.inputSchema.properties ?? {}), tool.function.name);
      assert.deepEqual(parameters.required ?? [], listed.inputSchema.required ?? [], tool.function.name);
      // Bounds that grammar-constrained engines refuse are stated in descriptions instead.
      // (A keyword's value is a number or a string; a property of that name holds a schema object.)
      assert.doesNotMatch(JSON.stringify(parameters), /"(minimum|maximum|exclusiveMinimum|exclusiveMaximum|multipleOf)":-?\d|"pattern":"/, tool.function.name);
    }
    const solve = body.tools.find((t) => t.function.name === TOOL_NAMES.solve)!.function.parameters as { properties: { shots: { description: string } } };
    assert.match(solve.properties.shots.description, /at least 1, at most 65536/);
    // The MCP listing keeps the bounds, and calls are checked against them.
    assert.equal((tools.get(TOOL_NAMES.solve)!.inputSchema.properties as { shots: { maximum: number } }).shots.maximum, 65536);
    assert.match(await callError(TOOL_NAMES.solve, { solver: 'grover', problem: { type: 'qrng', bits: 8 }, shots: 70000 }), /shots/);
  });
});

describe('transport', () => {
  test('a foreign Origin or Host is 403', async () => {
    const origin = await raw('POST', '/mcp', { ...MCP_HEADERS, origin: 'http://evil.example' }, initialize);
    assert.equal(origin.status, 403);
    assert.match(rpcOf(origin).error?.message ?? '', /Origin/);
    const host = await raw('POST', '/mcp', { ...MCP_HEADERS, host: `evil.example:${daemon.port}` }, initialize);
    assert.equal(host.status, 403);
    assert.equal(typeof rpcOf(host).error?.code, 'number');
    const tools = await raw('GET', '/openai-tools', { origin: 'http://evil.example' });
    assert.equal(tools.status, 403);
    // /openai-tools is not JSON-RPC: its errors use the OpenAI envelope.
    assert.equal(typeof (JSON.parse(tools.body) as { error?: { message?: unknown } }).error?.message, 'string');
    assert.equal((JSON.parse(tools.body) as { jsonrpc?: unknown }).jsonrpc, undefined);
    // A loopback origin (a local web app) is served.
    const local = await raw('POST', '/mcp', { ...MCP_HEADERS, origin: 'http://localhost:3000' }, initialize);
    assert.equal(local.status, 200);
    assert.ok(local.headers['mcp-session-id'] !== undefined);
  });

  test('session lifecycle: initialize, use, DELETE, then 404 for the ended id', async () => {
    const opened = await raw('POST', '/mcp', MCP_HEADERS, initialize);
    assert.equal(opened.status, 200);
    const id = String(opened.headers['mcp-session-id']);
    const headers = { ...MCP_HEADERS, 'mcp-session-id': id, 'mcp-protocol-version': '2025-06-18' };
    assert.equal((await raw('POST', '/mcp', headers, JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }))).status, 202);
    const listed = await raw('POST', '/mcp', headers, JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }));
    assert.equal(listed.status, 200);
    assert.equal((rpcOf(listed).result as { tools: unknown[] }).tools.length, Object.keys(TOOL_NAMES).length);
    assert.equal((await raw('DELETE', '/mcp', headers)).status, 200);
    const gone = await raw('POST', '/mcp', headers, JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/list' }));
    assert.equal(gone.status, 404);
    assert.equal(rpcOf(gone).error?.code, -32001);
  });

  test('no session id on a non-initialize request is 400; an unknown one 404', async () => {
    const none = await raw('POST', '/mcp', MCP_HEADERS, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }));
    assert.equal(none.status, 400);
    const unknown = await raw('POST', '/mcp', { ...MCP_HEADERS, 'mcp-session-id': 'not-a-session' }, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }));
    assert.equal(unknown.status, 404);
    assert.equal((await raw('GET', '/mcp', { accept: 'text/event-stream' })).status, 400);
    assert.equal((await raw('DELETE', '/mcp', { 'mcp-session-id': 'not-a-session' })).status, 404);
  });

  test('malformed JSON, a wrong content type and a huge body get JSON-RPC errors, never 5xx', async () => {
    const malformed = await raw('POST', '/mcp', MCP_HEADERS, '{"jsonrpc": "2.0", "id": 1,');
    assert.equal(malformed.status, 400);
    assert.equal(rpcOf(malformed).error?.code, -32700);
    const proto = await raw('POST', '/mcp', MCP_HEADERS, '{"jsonrpc":"2.0","id":1,"method":"initialize","__proto__":{"x":1}}');
    assert.equal(proto.status, 400);
    const text = await raw('POST', '/mcp', { ...MCP_HEADERS, 'content-type': 'text/plain' }, initialize);
    assert.equal(text.status, 415);
    assert.equal(typeof rpcOf(text).error?.code, 'number');
    const huge = await raw('POST', '/mcp', MCP_HEADERS, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping', params: { pad: 'x'.repeat(5 * 1024 * 1024) } }));
    assert.equal(huge.status, 413);
    assert.equal(typeof rpcOf(huge).error?.code, 'number');
    const notRpc = await raw('POST', '/mcp', MCP_HEADERS, '{"hello":"world"}');
    assert.ok(notRpc.status >= 400 && notRpc.status < 500, String(notRpc.status));
  });
});
