/**
 * Every endpoint of a local daemon, called as a client would: shared by the outbound test (sockets
 * watched through /proc) and the offline test (run inside a loopback-only network namespace, where
 * it runs as a script: `node test/helpers/every-endpoint.ts <base-url>`).
 */
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { TOOL_NAMES } from '../../src/mcp/tool-names.ts';
import { blobs, patternProblem, portfolioProblem, routeProblem } from '../quantum/fixtures.ts';
import { ResponsesSocketClient } from './responses-socket-client.ts';

export interface OutboundHealth {
  status: string;
  telemetry: string;
  outbound_connections: number;
  outbound_connections_total: number;
  local_connections: { open: number; total: number };
  network: { listen: string[]; loopback_only: boolean };
}

export const JSON_HEADERS = { 'content-type': 'application/json' };

export async function call(base: string, method: string, path: string, body?: unknown): Promise<{ status: number; json: unknown; text: string }> {
  const response = await fetch(`${base}${path}`, { method, ...(body === undefined ? {} : { headers: JSON_HEADERS, body: JSON.stringify(body) }) });
  const text = await response.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: response.status, json, text };
}

export async function expect(base: string, method: string, path: string, status: number, body?: unknown): Promise<unknown> {
  const answer = await call(base, method, path, body);
  assert.equal(answer.status, status, `${method} ${path}: ${answer.text.slice(0, 300)}`);
  return answer.json;
}

export async function health(base: string): Promise<OutboundHealth> {
  return (await expect(base, 'GET', '/health', 200)) as OutboundHealth;
}

/**
 * Every endpoint of the local daemon, as a client would call it; each answer's status is checked.
 * Expects a daemon with the fixture model `tiny`, no upstream and telemetry none.
 */
export async function exerciseEveryEndpoint(base: string): Promise<void> {
  const chat = { model: 'tiny', messages: [{ role: 'user', content: 'Hello' }], max_tokens: 4, temperature: 0 };
  await health(base);
  await expect(base, 'GET', '/v1/models', 200);
  await expect(base, 'GET', '/v1/models/tiny', 200);
  await expect(base, 'POST', '/api/models/unload', 200, { model: 'tiny' });
  await expect(base, 'POST', '/api/models/load', 200, { model: 'tiny' });
  // Pull and delete without a hub: a reference that names nothing and a --model file are refused here, offline.
  await expect(base, 'POST', '/v1/models/pull', 400, { model: 'not a reference' });
  await expect(base, 'DELETE', '/v1/models/tiny', 409);
  await expect(base, 'DELETE', '/v1/models/no-such-model', 404);
  await expect(base, 'POST', '/v1/chat/completions', 200, chat);
  const streamed = await call(base, 'POST', '/v1/chat/completions', { ...chat, stream: true });
  assert.equal(streamed.status, 200);
  assert.match(streamed.text, /data: \[DONE\]/);
  await expect(base, 'POST', '/v1/completions', 200, { model: 'tiny', prompt: 'Once', max_tokens: 4 });
  // Stateful responses: kept by default, read back, its input items, continued, deleted.
  const stored = (await expect(base, 'POST', '/v1/responses', 200, { model: 'tiny', input: 'Hi', max_output_tokens: 4 })) as { id: string };
  await expect(base, 'GET', `/v1/responses/${stored.id}`, 200);
  await expect(base, 'GET', `/v1/responses/${stored.id}/input_items`, 200);
  await expect(base, 'POST', '/v1/responses', 200, { model: 'tiny', input: 'And?', previous_response_id: stored.id, max_output_tokens: 4 });
  await expect(base, 'DELETE', `/v1/responses/${stored.id}`, 200);
  await expect(base, 'GET', `/v1/responses/${stored.id}`, 404);
  await expect(base, 'POST', '/v1/responses/compact', 200, { model: 'tiny', input: 'Hi' });
  const socket = await ResponsesSocketClient.open(base);
  const turn = await socket.turn({ type: 'response.create', model: 'tiny', input: 'Hi', max_output_tokens: 4 });
  socket.close();
  assert.match(turn.at(-1)?.type ?? '', /^response\.(completed|incomplete)$/, 'a WebSocket turn of /v1/responses');
  await expect(base, 'POST', '/v1/messages', 200, { model: 'tiny', max_tokens: 4, messages: [{ role: 'user', content: 'Hi' }] });
  const events = await call(base, 'POST', '/v1/messages', { model: 'tiny', max_tokens: 4, stream: true, messages: [{ role: 'user', content: 'Hi' }] });
  assert.match(events.text, /event: message_stop/);
  await expect(base, 'POST', '/v1/messages/count_tokens', 200, { model: 'tiny', messages: [{ role: 'user', content: 'Hi' }] });
  await expect(base, 'POST', '/v1/embeddings', 200, { model: 'tiny', input: 'pumps' });
  await expect(base, 'POST', '/v1/embeddings', 200, { model: 'svc-hashed-embed-v2', input: 'pumps' });
  // Rerank: the fixture chat model has no ranking head, which is refused by name.
  await expect(base, 'POST', '/v1/rerank', 400, { model: 'tiny', query: 'pumps', documents: ['a', 'b'] });
  await expect(base, 'POST', '/v1/images/generations', 501, { prompt: 'x' });
  await expect(base, 'POST', '/v1/audio/transcriptions', 501, {});

  await expect(base, 'POST', '/api/spaces', 201, { name: 'notes' });
  await expect(base, 'GET', '/api/spaces', 200);
  await expect(base, 'GET', '/api/spaces/notes', 200);
  const added = (await expect(base, 'POST', '/api/spaces/notes/documents', 201, { text: 'The impeller seal is replaced every 2000 hours.', title: 'Pump' })) as { id: string };
  const form = new FormData();
  form.append('file', new Blob(['# Valves\n\nCheck the relief valve monthly.'], { type: 'text/markdown' }), 'valves.md');
  const upload = await fetch(`${base}/api/spaces/notes/documents?wait=true`, { method: 'POST', body: form });
  assert.equal(upload.status, 200, await upload.clone().text());
  await expect(base, 'GET', '/api/spaces/notes/documents', 200);
  await expect(base, 'GET', `/api/spaces/notes/documents/${added.id}?include=text`, 200);
  await expect(base, 'POST', '/api/spaces/notes/search', 200, { query: 'impeller seal' });
  await expect(base, 'POST', '/api/search', 200, { query: 'relief valve' });
  await expect(base, 'POST', '/v1/chat/completions', 200, { ...chat, spaces: ['notes'] });
  await expect(base, 'POST', '/api/spaces/notes/reindex', 200);

  const solves = [
    { solver: 'qaoa', problem: routeProblem(3) },
    { solver: 'grover', problem: patternProblem(16, 5) },
    { solver: 'grover', problem: { type: 'qrng', bits: 32 } },
    { solver: 'qkmeans', problem: { type: 'clustering', data: blobs({ a: [0, 0], b: [5, 5] }, 3, 0.3).map((p, i) => ({ id: `p${i}`, features: p.features })), k: 2, max_iterations: 5 } },
    { solver: 'qsvm', problem: { type: 'classification', training_data: blobs({ a: [0, 0], b: [3, 3] }, 3, 0.3), predict: [{ features: [0.1, 0] }] } },
    { solver: 'qubo', problem: portfolioProblem() },
  ];
  for (const solve of solves) await expect(base, 'POST', '/api/solve', 200, { ...solve, shots: 64 });
  await expect(base, 'POST', '/api/solve/batch', 200, { solver: 'qubo', problems: [portfolioProblem(), portfolioProblem()], shots: 64 });
  // Solve jobs: submit, watch (SSE to the end), fetch, and cancel a finished one (answered as it is).
  const job = (await expect(base, 'POST', '/api/solve/jobs', 202, { solver: 'grover', problem: patternProblem(16, 5), shots: 64 })) as { id: string };
  const jobEvents = await (await fetch(`${base}/api/solve/jobs/${job.id}/events`)).text();
  assert.match(jobEvents, /^event: completed$/m);
  assert.equal(((await expect(base, 'GET', `/api/solve/jobs/${job.id}`, 200)) as { status: string }).status, 'completed');
  assert.equal(((await expect(base, 'DELETE', `/api/solve/jobs/${job.id}`, 200)) as { status: string }).status, 'completed');

  // MCP: the tools call the daemon back over its own loopback listener.
  const mcp = new Client({ name: 'outbound-test', version: '1.0.0' });
  await mcp.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`)));
  try {
    assert.ok((await mcp.listTools()).tools.length > 0);
    for (const [name, args] of [[TOOL_NAMES.health, {}], [TOOL_NAMES.searchSpace, { space: 'notes', query: 'impeller' }], [TOOL_NAMES.chat, { model: 'tiny', messages: [{ role: 'user', content: 'Hi' }], max_tokens: 4 }]] as const) {
      const result = (await mcp.callTool({ name, arguments: args })) as CallToolResult;
      assert.notEqual(result.isError, true, `${name}: ${JSON.stringify(result.content)}`);
    }
    await mcp.listResources();
  } finally {
    await mcp.close();
  }
  await expect(base, 'GET', '/openai-tools', 200);

  // The console and telemetry: the page, one of its hashed assets, the telemetry view, and a
  // send refused because telemetry is none.
  const page = await call(base, 'GET', '/');
  assert.equal(page.status, 200);
  const asset = /\/assets\/[\w.-]+\.(?:js|css)/.exec(page.text)?.[0];
  assert.ok(asset !== undefined, 'the console page names an asset');
  await expect(base, 'GET', asset, 200);
  await expect(base, 'GET', '/telemetry', 200);
  await expect(base, 'POST', '/telemetry/send', 409);

  await expect(base, 'GET', '/no/such/path', 404);
  await expect(base, 'GET', '/v1/models/no-such-model', 404);
  await expect(base, 'POST', '/v1/chat/completions', 404, { ...chat, model: 'no-such-model' });
  await expect(base, 'DELETE', `/api/spaces/notes/documents/${added.id}`, 200);
  await expect(base, 'DELETE', '/api/spaces/notes', 200);
  await expect(base, 'DELETE', '/api/spaces/notes', 404);
}

// Run as a script (the offline test runs it inside the daemon's namespace): exit 0 when every answer was as expected.
if (import.meta.main) {
  const base = process.argv[2];
  if (base === undefined) throw new Error('usage: node test/helpers/every-endpoint.ts <base-url>');
  await exerciseEveryEndpoint(base);
}
