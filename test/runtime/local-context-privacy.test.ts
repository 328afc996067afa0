/**
 * The privacy rule on the chat paths, end to end: a request that carries local context (svc's
 * tools, a call of one and its result, retrieval from spaces) to a model a remote upstream
 * serves is refused with 403 `local_context_not_allowed`, and the upstream receives nothing.
 * The same request without local context goes through; local models and local upstreams get
 * local context as before. Scripted upstreams stand in for the remote and the LAN-local server.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, beforeEach, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import OpenAI from 'openai';
import { startDaemon, type DaemonProcess } from '../helpers/daemon-process.ts';
import { answer, startScriptedUpstream, type ScriptedUpstream } from '../helpers/scripted-upstream.ts';
import { TOOL_NAMES } from '../../src/mcp/tool-names.ts';

/** What a search of the user's notes returned: it must never leave the machine, nor be echoed. */
const SECRET = 'vault: the safe code is 4417-2291';

const completion = {
  id: 'chatcmpl-up', object: 'chat.completion', created: 1, model: 'gpt',
  choices: [{ index: 0, message: { role: 'assistant', content: 'from upstream' }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 },
};

let cloud: ScriptedUpstream;
let lan: ScriptedUpstream;
let daemon: DaemonProcess;
let client: OpenAI;

before(async () => {
  [cloud, lan] = await Promise.all([startScriptedUpstream(answer(200, completion)), startScriptedUpstream(answer(200, completion))]);
  const config = join(mkdtempSync(join(tmpdir(), 'svc-local-context-')), 'config.toml');
  // Both listen on loopback; `cloud` is declared remote (as a server off this machine is by
  // default), `lan` keeps the loopback default: local.
  writeFileSync(config, `
[[upstreams]]
name = "cloud"
base_url = "${cloud.baseUrl}"
models = ["gpt"]
kind = "remote"

[[upstreams]]
name = "lan"
base_url = "${lan.baseUrl}"
models = ["gpt"]
`);
  daemon = await startDaemon({ args: ['--config', config] });
  client = new OpenAI({ baseURL: `${daemon.url}/v1`, apiKey: 'none', maxRetries: 0 });
  const created = await fetch(`${daemon.url}/api/spaces`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'notes' }) });
  assert.equal(created.status, 201);
  const added = await fetch(`${daemon.url}/api/spaces/notes/documents`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ title: 'Safe', text: `${SECRET}. Ask before opening the safe.` }),
  });
  assert.ok(added.ok, await added.text());
});

after(async () => {
  await daemon.stop();
  await Promise.all([cloud.close(), lan.close()]);
});

beforeEach(() => {
  cloud.requests.length = 0;
  lan.requests.length = 0;
});

const searchTool: OpenAI.Chat.ChatCompletionTool = {
  type: 'function',
  function: { name: TOOL_NAMES.searchSpace, description: 'Search a knowledge space', parameters: { type: 'object', properties: { space: { type: 'string' }, query: { type: 'string' } }, required: ['space', 'query'] } },
};
const weatherTool: OpenAI.Chat.ChatCompletionTool = {
  type: 'function',
  function: { name: 'get_weather', description: 'The weather in a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } },
};
/** A conversation that called svc's search tool and carries its result. */
const withToolResult: OpenAI.Chat.ChatCompletionMessageParam[] = [
  { role: 'user', content: 'What is the safe code?' },
  { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: TOOL_NAMES.searchSpace, arguments: '{"space":"notes","query":"safe"}' } }] },
  { role: 'tool', tool_call_id: 'call_1', content: SECRET },
];
const ask: OpenAI.Chat.ChatCompletionMessageParam[] = [{ role: 'user', content: 'What is the safe code?' }];

type WithSpaces = OpenAI.Chat.ChatCompletionCreateParamsNonStreaming & { spaces: string[] };

async function refusal(promise: Promise<unknown>, param: string): Promise<void> {
  let error: unknown;
  try {
    await promise;
  } catch (caught) {
    error = caught;
  }
  assert.ok(error instanceof OpenAI.APIError, `expected a refusal, got ${String(error)}`);
  assert.equal(error.status, 403);
  assert.equal(error.type, 'permission_error');
  assert.equal(error.code, 'local_context_not_allowed');
  assert.equal(error.param, param);
  assert.match(error.message, /"cloud\/gpt" is served by a remote upstream/);
  assert.ok(!error.message.includes(SECRET), 'the refusal repeats the local context');
}

describe('to a model a remote upstream serves', () => {
  test("svc's tools in tools are refused, and the upstream receives nothing", async () => {
    await refusal(client.chat.completions.create({ model: 'cloud/gpt', messages: ask, tools: [weatherTool, searchTool] }), 'tools[1].function.name');
    assert.equal(cloud.requests.length, 0);
  });

  test('a call of an svc tool and its result are refused, and the upstream receives nothing', async () => {
    await refusal(client.chat.completions.create({ model: 'cloud/gpt', messages: withToolResult }), 'messages[1].tool_calls[0].function.name');
    assert.equal(cloud.requests.length, 0);
  });

  test("the output of svc's MCP search tool, fed to a remote model as its result, is refused", async () => {
    // What an agent does: it calls svc over MCP, then hands the result to its (remote) model.
    const mcp = new Client({ name: 'agent', version: '1.0.0' });
    await mcp.connect(new StreamableHTTPClientTransport(new URL(`${daemon.url}/mcp`)));
    const args = { space: 'notes', query: 'safe code' };
    const result = await mcp.callTool({ name: TOOL_NAMES.searchSpace, arguments: args });
    await mcp.close();
    const output = (result.content as { type: string; text: string }[])[0]!.text;
    assert.ok(output.includes(SECRET), 'the search found the note');
    await refusal(client.chat.completions.create({
      model: 'cloud/gpt',
      tools: [weatherTool],
      messages: [
        ...ask,
        { role: 'assistant', content: null, tool_calls: [{ id: 'call_9', type: 'function', function: { name: TOOL_NAMES.searchSpace, arguments: JSON.stringify(args) } }] },
        { role: 'tool', tool_call_id: 'call_9', content: output },
      ],
    }), 'messages[1].tool_calls[0].function.name');
    assert.equal(cloud.requests.length, 0);
  });

  test('a tool result that names an svc tool is refused, and the upstream receives nothing', async () => {
    const messages = [
      { role: 'user', content: 'What is the safe code?' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'lookup', arguments: '{}' } }] },
      { role: 'tool', tool_call_id: 'call_1', name: TOOL_NAMES.searchSpace, content: SECRET },
    ];
    await refusal(client.chat.completions.create({ model: 'cloud/gpt', messages } as unknown as OpenAI.Chat.ChatCompletionCreateParamsNonStreaming), 'messages[2].name');
    assert.equal(cloud.requests.length, 0);
  });

  test('retrieval from spaces is refused, and the upstream receives nothing', async () => {
    await refusal(client.chat.completions.create({ model: 'cloud/gpt', messages: ask, spaces: ['notes'] } as WithSpaces), 'spaces');
    assert.equal(cloud.requests.length, 0);
  });

  test('streamed requests are refused the same way, before the stream starts', async () => {
    await refusal(client.chat.completions.create({ model: 'cloud/gpt', messages: withToolResult, stream: true }), 'messages[1].tool_calls[0].function.name');
    assert.equal(cloud.requests.length, 0);
  });

  test('the Responses API refuses svc tools and their calls, and the upstream receives nothing', async () => {
    await refusal(client.responses.create({
      model: 'cloud/gpt', input: 'What is the safe code?',
      tools: [{ type: 'function', name: TOOL_NAMES.searchSpace, parameters: searchTool.function.parameters ?? null, strict: false }],
    }), 'tools[0].name');
    await refusal(client.responses.create({
      model: 'cloud/gpt',
      input: [
        { role: 'user', content: 'What is the safe code?' },
        { type: 'function_call', call_id: 'call_1', name: TOOL_NAMES.searchSpace, arguments: '{}' },
        { type: 'function_call_output', call_id: 'call_1', output: SECRET },
      ],
    }), 'input[1].name');
    assert.equal(cloud.requests.length, 0);
  });

  test('the x-svc-local-context marker is refused on chat and embeddings, and the upstream receives nothing', async () => {
    const marked = { 'content-type': 'application/json', 'x-svc-local-context': '1' };
    for (const [path, body] of [['chat/completions', { model: 'cloud/gpt', messages: [{ role: 'user', content: SECRET }] }], ['embeddings', { model: 'cloud/gpt', input: SECRET }]] as const) {
      const response = await fetch(`${daemon.url}/v1/${path}`, { method: 'POST', headers: marked, body: JSON.stringify(body) });
      assert.equal(response.status, 403, path);
      const error = ((await response.json()) as { error: { code: string; message: string } }).error;
      assert.equal(error.code, 'local_context_not_allowed', path);
      assert.ok(!error.message.includes(SECRET));
    }
    assert.equal(cloud.requests.length, 0);
  });

  test("svc's MCP embed tool refuses a remote model, and the upstream receives nothing", async () => {
    const mcp = new Client({ name: 'agent', version: '1.0.0' });
    await mcp.connect(new StreamableHTTPClientTransport(new URL(`${daemon.url}/mcp`)));
    const result = await mcp.callTool({ name: TOOL_NAMES.embed, arguments: { model: 'cloud/gpt', input: SECRET } });
    await mcp.close();
    assert.equal(result.isError, true);
    assert.equal(cloud.requests.length, 0);
  });

  test('the same request without local context goes through', async () => {
    const reply = await client.chat.completions.create({ model: 'cloud/gpt', messages: ask, tools: [weatherTool] });
    assert.equal(reply.choices[0]!.message.content, 'from upstream');
    assert.equal(cloud.requests.length, 1);
    const sent = cloud.requests[0]!.body as { tools: { function: { name: string } }[] };
    assert.deepEqual(sent.tools.map((t) => t.function.name), ['get_weather']);
  });
});

describe('local models and local upstreams', () => {
  test("a model svc's engine serves takes svc's tools and their results", async () => {
    const reply = await client.chat.completions.create({ model: 'tiny', max_tokens: 24, messages: withToolResult, tools: [searchTool] });
    assert.equal(reply.model, 'tiny');
    assert.equal(reply.choices.length, 1);
    const called = await client.chat.completions.create({ model: 'tiny', max_tokens: 200, temperature: 1, seed: 3, messages: ask, tools: [searchTool], tool_choice: 'required' });
    assert.equal(called.choices[0]!.message.tool_calls?.[0]?.type === 'function' && called.choices[0]!.message.tool_calls[0].function.name, TOOL_NAMES.searchSpace);
  });

  test('an upstream on this machine gets the tools, the tool result and the sources of a space', async () => {
    await client.chat.completions.create({ model: 'lan/gpt', messages: withToolResult, tools: [searchTool] });
    await client.chat.completions.create({ model: 'lan/gpt', messages: ask, spaces: ['notes'] } as WithSpaces);
    assert.equal(lan.requests.length, 2);
    assert.ok(JSON.stringify(lan.requests[0]!.body).includes(SECRET));
    const sources = lan.requests[1]!.body as { messages: { role: string; content: string }[] };
    assert.equal(sources.messages[0]!.role, 'system');
    assert.ok(sources.messages[0]!.content.includes(SECRET));
    assert.equal(cloud.requests.length, 0);
  });
});
