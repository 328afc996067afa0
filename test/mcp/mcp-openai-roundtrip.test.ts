/**
 * An app that uses OpenAI function calling with svc's tools: the official `openai` client takes
 * `/openai-tools`, the fixture model calls one (grammar-constrained, so even random weights
 * write a valid call), the call runs through MCP (the SDK's client), and the result goes back to
 * the model as a `tool` message for the final reply.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type OpenAI from 'openai';
import { startDaemonWithClient, type DaemonProcess } from '../helpers/daemon-process.ts';
import { TOOL_NAMES } from '../../src/mcp/tool-names.ts';

let daemon: DaemonProcess;
let openai: OpenAI;
let mcp: Client;

before(async () => {
  // The ten tools' definitions are long in the fixture's byte-level tokens; a larger context holds them.
  ({ daemon, client: openai } = await startDaemonWithClient({ args: ['--context-size', '32768'] }));
  mcp = new Client({ name: 'svc-roundtrip-test', version: '1.0.0' });
  await mcp.connect(new StreamableHTTPClientTransport(new URL(`${daemon.url}/mcp`)));
});
after(async () => {
  await mcp.close();
  assert.equal(await daemon.stop(), 0);
});

test('/openai-tools → forced tool call → executed through MCP → tool message → reply', async () => {
  const { tools } = await (await fetch(`${daemon.url}/openai-tools`)).json() as { tools: OpenAI.Chat.ChatCompletionFunctionTool[] };
  assert.equal(tools.length, Object.keys(TOOL_NAMES).length);
  const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Is the svc runtime healthy?' }];

  const first = await openai.chat.completions.create({
    model: 'tiny', messages, tools, tool_choice: { type: 'function', function: { name: TOOL_NAMES.health } }, seed: 1, max_tokens: 64,
  });
  const choice = first.choices[0]!;
  assert.equal(choice.finish_reason, 'tool_calls');
  const call = choice.message.tool_calls?.[0];
  assert.ok(call !== undefined && call.type === 'function');
  assert.equal(call.function.name, TOOL_NAMES.health);

  const result = (await mcp.callTool({ name: call.function.name, arguments: JSON.parse(call.function.arguments) as Record<string, unknown> })) as CallToolResult;
  assert.notEqual(result.isError, true, JSON.stringify(result.content));
  const output = result.content.find((c) => c.type === 'text');
  assert.ok(output?.type === 'text');
  assert.match(output.text, /"status":"ok"/);

  const question = [...messages];
  messages.push(choice.message, { role: 'tool', tool_call_id: call.id, content: output.text });
  const final = await openai.chat.completions.create({ model: 'tiny', messages, seed: 1, max_tokens: 8 });
  assert.equal(final.choices[0]!.message.tool_calls, undefined);
  assert.ok(['stop', 'length'].includes(final.choices[0]!.finish_reason));
  // The call and its result are in the prompt: longer than the question alone by at least the result's text.
  const alone = await openai.chat.completions.create({ model: 'tiny', messages: question, seed: 1, max_tokens: 1 });
  assert.ok((final.usage?.prompt_tokens ?? 0) - (alone.usage?.prompt_tokens ?? 0) >= output.text.length / 4, 'the tool result reached the model');
});

test('a forced call with arguments: the model writes them to the /openai-tools schema, MCP checks them against the full one, the answer goes back', async () => {
  const { tools } = await (await fetch(`${daemon.url}/openai-tools`)).json() as { tools: OpenAI.Chat.ChatCompletionFunctionTool[] };
  const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Search my notes for the pump pressure.' }];
  // Room for the whole call: random weights write long strings into every string field
  // (query, and since rerank, rerank's model id too), and a call cut short ends as `length`.
  const first = await openai.chat.completions.create({
    model: 'tiny', messages, tools, tool_choice: { type: 'function', function: { name: TOOL_NAMES.searchSpace } }, seed: 1, max_tokens: 1000,
  });
  assert.equal(first.choices[0]!.finish_reason, 'tool_calls');
  const call = first.choices[0]!.message.tool_calls?.[0];
  assert.ok(call !== undefined && call.type === 'function');
  // The grammar follows the portable schema: the required fields, with their JSON types.
  const args = JSON.parse(call.function.arguments) as Record<string, unknown>;
  assert.equal(typeof args.space, 'string');
  assert.equal(typeof args.query, 'string');
  if (args.mode !== undefined && args.mode !== null) assert.ok(['hybrid', 'bm25', 'dense'].includes(args.mode as string));
  if (args.top_k !== undefined && args.top_k !== null) assert.ok(Number.isInteger(args.top_k));

  // Random weights pick values the portable schema only describes (a top_k below 1, a space that
  // does not exist): MCP checks the full schema and the runtime, and answers with a tool error the
  // model can read, never a protocol failure.
  const result = (await mcp.callTool({ name: call.function.name, arguments: args })) as CallToolResult;
  const output = result.content.find((c) => c.type === 'text');
  assert.ok(output?.type === 'text');
  if (result.isError === true) assert.match(output.text, /Invalid arguments for tool svc_search_space|not found|space/i);

  messages.push(first.choices[0]!.message, { role: 'tool', tool_call_id: call.id, content: output.text });
  const final = await openai.chat.completions.create({ model: 'tiny', messages, seed: 1, max_tokens: 8 });
  assert.ok(['stop', 'length'].includes(final.choices[0]!.finish_reason));
  assert.equal(final.choices[0]!.message.tool_calls, undefined);
});
