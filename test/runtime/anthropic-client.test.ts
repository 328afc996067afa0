/**
 * End to end with the official `@anthropic-ai/sdk`: Anthropic's Messages API on the real daemon
 * and the tiny random-weight fixture (its replies run to max_tokens), plus an OpenAI-compatible
 * upstream (a scripted one) behind the same translation. The model writes garbage wherever it
 * may, so tool checks are about what the grammar guarantees: a call of the forced tool whose
 * input matches its schema.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import { z } from 'zod';
import { startDaemon, type DaemonProcess } from '../helpers/daemon-process.ts';
import { sse, startScriptedUpstream, type ScriptedUpstream } from '../helpers/scripted-upstream.ts';
import { rejectionOf } from '../helpers/rejection-of.ts';

let daemon: DaemonProcess;
let client: Anthropic;
let upstream: ScriptedUpstream;

before(async () => {
  // The upstream answers every request with one streamed tool call (as Ollama streams them).
  upstream = await startScriptedUpstream(sse([
    { choices: [{ index: 0, delta: { role: 'assistant', content: 'Let me look. ' } }] },
    { choices: [{ index: 0, delta: { tool_calls: [{ index: 0, id: 'call_w1', function: { name: 'get_weather', arguments: '{"city":' } }] } }] },
    { choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: '"Oslo","unit":"c"}' } }] } }] },
    { choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }] },
    { choices: [], usage: { prompt_tokens: 21, completion_tokens: 9 } },
    'data: [DONE]',
  ]));
  const dir = mkdtempSync(join(tmpdir(), 'svc-anthropic-'));
  const config = join(dir, 'config.toml');
  writeFileSync(config, `
[[upstreams]]
name = "up"
base_url = "${upstream.baseUrl}"
models = ["m"]

[[upstreams]]
name = "far"
base_url = "${upstream.baseUrl}"
kind = "remote"
models = ["m"]
`);
  daemon = await startDaemon({ args: ['--config', config, '--body-limit', '256kb'] });
  client = new Anthropic({ baseURL: daemon.url, apiKey: 'none', maxRetries: 0 });
});
after(async () => {
  assert.equal(await daemon.stop(), 0);
  await upstream.close();
});

const weatherSchema = {
  type: 'object',
  properties: { city: { type: 'string', maxLength: 12 }, unit: { type: 'string', enum: ['c', 'f'] } },
  required: ['city', 'unit'],
  additionalProperties: false,
} as const;
const weather = z.fromJSONSchema(weatherSchema as unknown as Parameters<typeof z.fromJSONSchema>[0]);
const tools: Anthropic.Tool[] = [
  { name: 'get_weather', description: 'Weather in a city', input_schema: weatherSchema as unknown as Anthropic.Tool.InputSchema },
  { name: 'get_time', description: 'The time', input_schema: { type: 'object', properties: { utc: { type: 'boolean' } }, required: ['utc'] } },
];
const ask: Anthropic.MessageParam[] = [{ role: 'user', content: 'What is the weather in Paris?' }];

function textOf(message: Anthropic.Message): string {
  return message.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('');
}

const apiError = (promise: Promise<unknown>) => rejectionOf(promise, Anthropic.APIError);

/** The error body in Anthropic's envelope, checked whole. */
function assertEnvelope(error: InstanceType<typeof Anthropic.APIError>, status: number, type: string, message?: RegExp): void {
  assert.equal(error.status, status);
  const body = error.error as { type: string; error: { type: string; message: string } };
  assert.equal(body.type, 'error');
  assert.equal(body.error.type, type);
  assert.deepEqual(Object.keys(body.error).sort(), ['message', 'type']);
  if (message !== undefined) assert.match(body.error.message, message);
}

/** The SSE events of a raw streamed request, as [event name, data] pairs. */
async function rawEvents(body: object, headers: Record<string, string> = {}): Promise<[string, Record<string, unknown>][]> {
  const res = await fetch(`${daemon.url}/v1/messages`, { method: 'POST', headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01', ...headers }, body: JSON.stringify({ ...body, stream: true }) });
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /^text\/event-stream/);
  const text = await res.text();
  assert.ok(!text.includes('[DONE]'));
  return text.trim().split('\n\n').map((frame) => {
    const [eventLine, dataLine] = frame.split('\n');
    assert.match(eventLine!, /^event: /);
    const data = JSON.parse(dataLine!.slice('data: '.length)) as Record<string, unknown>;
    const name = eventLine!.slice('event: '.length);
    assert.equal(data.type, name, 'each event carries its name as type');
    return [name, data];
  });
}

describe('messages.create', () => {
  test('a whole Message: system prompt (string and blocks), multi-turn, usage; max_tokens ends it', async () => {
    for (const system of ['You are terse.', [{ type: 'text' as const, text: 'You are terse.', cache_control: { type: 'ephemeral' as const } }, { type: 'text' as const, text: 'Answer in French.' }]]) {
      const message = await client.messages.create({
        model: 'tiny', max_tokens: 12, system, metadata: { user_id: 'u-1' },
        messages: [{ role: 'user', content: 'Hello' }, { role: 'assistant', content: [{ type: 'text', text: 'Hi.' }] }, { role: 'user', content: [{ type: 'text', text: 'Say more.' }] }],
      });
      assert.match(message.id, /^msg_/);
      assert.equal(message.type, 'message');
      assert.equal(message.role, 'assistant');
      assert.equal(message.model, 'tiny');
      assert.equal(message.stop_reason, 'max_tokens');
      assert.equal(message.stop_sequence, null);
      assert.equal(message.usage.output_tokens, 12);
      assert.ok(message.usage.input_tokens > 10);
      assert.equal(message.content.length, 1);
      assert.equal(message.content[0]!.type, 'text');
      assert.ok(textOf(message).length > 0);
    }
  });

  test('temperature, top_p and top_k are honoured (temperature 0 is deterministic); anthropic-version of any date is accepted', async () => {
    const params = { model: 'tiny', max_tokens: 10, messages: ask, temperature: 0, top_p: 0.9, top_k: 20 } as Anthropic.MessageCreateParamsNonStreaming;
    const first = await client.messages.create(params);
    const second = await client.messages.create(params, { headers: { 'anthropic-version': '2023-06-01' } });
    assert.equal(textOf(first), textOf(second));
  });

  test('stop_sequences: the reply ends before the first match, stop_reason stop_sequence names it', async () => {
    const params = { model: 'tiny', max_tokens: 24, messages: ask, temperature: 0 } as Anthropic.MessageCreateParamsNonStreaming;
    const full = textOf(await client.messages.create(params));
    assert.ok(full.length >= 8, full);
    const stop = full.slice(4, 7);
    const cut = await client.messages.create({ ...params, stop_sequences: ['never-there', stop] });
    assert.equal(cut.stop_reason, 'stop_sequence');
    assert.equal(cut.stop_sequence, stop);
    assert.equal(textOf(cut), full.slice(0, full.indexOf(stop)));
  });
});

describe('streaming', () => {
  test("Anthropic's exact event sequence: message_start, ping, block start/deltas/stop, message_delta, message_stop", async () => {
    const events = await rawEvents({ model: 'tiny', max_tokens: 8, messages: ask });
    const names = events.map(([name]) => name);
    assert.deepEqual(names.slice(0, 3), ['message_start', 'ping', 'content_block_start']);
    assert.deepEqual(names.slice(-3), ['content_block_stop', 'message_delta', 'message_stop']);
    assert.ok(names.slice(3, -3).every((n) => n === 'content_block_delta'));
    const start = events[0]![1].message as Record<string, unknown>;
    assert.deepEqual(start.content, []);
    assert.equal(start.stop_reason, null);
    assert.ok((start.usage as { input_tokens: number }).input_tokens > 0);
    assert.deepEqual(events[2]![1].content_block, { type: 'text', text: '' });
    const delta = events.at(-2)![1];
    assert.deepEqual(delta.delta, { stop_reason: 'max_tokens', stop_sequence: null });
    assert.equal((delta.usage as { output_tokens: number }).output_tokens, 8);
  });

  test('messages.stream: text events add up to finalMessage, which matches the whole reply at temperature 0', async () => {
    const params = { model: 'tiny', max_tokens: 16, messages: ask, temperature: 0 } as Anthropic.MessageStreamParams;
    const stream = client.messages.stream(params);
    let streamed = '';
    stream.on('text', (delta) => { streamed += delta; });
    const final = await stream.finalMessage();
    assert.equal(textOf(final), streamed);
    assert.equal(final.stop_reason, 'max_tokens');
    assert.equal(final.usage.output_tokens, 16);
    const whole = await client.messages.create(params as Anthropic.MessageCreateParamsNonStreaming);
    assert.equal(textOf(whole), streamed);
    assert.equal(final.usage.input_tokens, whole.usage.input_tokens);
  });

  test('a stop sequence streamed: message_delta says stop_sequence and names it', async () => {
    const params = { model: 'tiny', max_tokens: 24, messages: ask, temperature: 0 } as Anthropic.MessageCreateParamsNonStreaming;
    const full = textOf(await client.messages.create(params));
    const stop = full.slice(5, 8);
    const final = await client.messages.stream({ ...params, stop_sequences: [stop] }).finalMessage();
    assert.equal(final.stop_reason, 'stop_sequence');
    assert.equal(final.stop_sequence, stop);
    assert.equal(textOf(final), full.slice(0, full.indexOf(stop)));
  });
});

describe('tools', () => {
  test('a forced tool (tool_choice tool) is called with valid input; the tool_result round trip continues the conversation', async () => {
    for (let round = 0; round < 2; round++) {
      const first = await client.messages.create({ model: 'tiny', max_tokens: 200, messages: ask, tools, tool_choice: { type: 'tool', name: 'get_weather' }, temperature: 1 } as Anthropic.MessageCreateParamsNonStreaming);
      assert.equal(first.stop_reason, 'tool_use');
      const uses = first.content.filter((b): b is Anthropic.ToolUseBlock => b.type === 'tool_use');
      assert.equal(uses.length, 1);
      assert.match(uses[0]!.id, /^toolu_/);
      assert.equal(uses[0]!.name, 'get_weather');
      assert.ok(weather.safeParse(uses[0]!.input).success, JSON.stringify(uses[0]!.input));
      const next = await client.messages.create({
        model: 'tiny', max_tokens: 8, tools,
        messages: [...ask, { role: 'assistant', content: first.content }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: uses[0]!.id, content: '12 °C, rain' }] }],
      });
      assert.equal(next.stop_reason, 'max_tokens');
      assert.ok(next.usage.input_tokens > first.usage.input_tokens);
    }
  });

  test("tool_choice any calls a listed tool; none never calls; streamed, the tool_use input arrives as input_json_delta", async () => {
    const any = await client.messages.create({ model: 'tiny', max_tokens: 200, messages: ask, tools, tool_choice: { type: 'any' } });
    assert.equal(any.stop_reason, 'tool_use');
    assert.ok(any.content.some((b) => b.type === 'tool_use' && ['get_weather', 'get_time'].includes(b.name)));
    const none = await client.messages.create({ model: 'tiny', max_tokens: 8, messages: ask, tools, tool_choice: { type: 'none' } });
    assert.ok(none.content.every((b) => b.type === 'text'));
    const stream = client.messages.stream({ model: 'tiny', max_tokens: 200, messages: ask, tools, tool_choice: { type: 'tool', name: 'get_weather' } });
    let json = '';
    stream.on('inputJson', (delta) => { json += delta; });
    const final = await stream.finalMessage();
    assert.equal(final.stop_reason, 'tool_use');
    const use = final.content.find((b): b is Anthropic.ToolUseBlock => b.type === 'tool_use')!;
    assert.deepEqual(use.input, JSON.parse(json));
    assert.ok(weather.safeParse(use.input).success);
  });
});

describe('count_tokens', () => {
  test('counts the prompt as the model reads it: the same as a reply reports, more with a system prompt and tools', async () => {
    const { input_tokens: bare } = await client.messages.countTokens({ model: 'tiny', messages: ask });
    const message = await client.messages.create({ model: 'tiny', max_tokens: 1, messages: ask });
    assert.equal(bare, message.usage.input_tokens);
    const { input_tokens: withSystem } = await client.messages.countTokens({ model: 'tiny', messages: ask, system: 'You are a weather bot with a long, long system prompt.' });
    assert.ok(withSystem > bare);
    const { input_tokens: withTools } = await client.messages.countTokens({ model: 'tiny', messages: ask, tools });
    assert.ok(withTools > bare);
  });

  test('unknown model: 404 not_found_error', async () => {
    assertEnvelope(await apiError(client.messages.countTokens({ model: 'nope', messages: ask })), 404, 'not_found_error', /nope/);
  });
});

describe("errors in Anthropic's envelope", () => {
  const post = (body: string, headers: Record<string, string> = {}) =>
    fetch(`${daemon.url}/v1/messages`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });

  test('missing max_tokens, unknown fields, out-of-range temperature: 400 invalid_request_error naming the field', async () => {
    const missing = await apiError(client.messages.create({ model: 'tiny', messages: ask } as unknown as Anthropic.MessageCreateParamsNonStreaming));
    assertEnvelope(missing, 400, 'invalid_request_error', /max_tokens/);
    assertEnvelope(await apiError(client.messages.create({ model: 'tiny', max_tokens: 4, messages: ask, frobnicate: 1 } as Anthropic.MessageCreateParamsNonStreaming)), 400, 'invalid_request_error', /frobnicate/);
    assertEnvelope(await apiError(client.messages.create({ model: 'tiny', max_tokens: 4, messages: ask, temperature: 1.5 } as Anthropic.MessageCreateParamsNonStreaming)), 400, 'invalid_request_error', /temperature/);
  });

  test('bad turn order: a last assistant turn (prefill), a tool_result that answers nothing, a tool_use left unanswered', async () => {
    assertEnvelope(await apiError(client.messages.create({ model: 'tiny', max_tokens: 4, messages: [...ask, { role: 'assistant', content: 'The weather is' }] })), 400, 'invalid_request_error', /prefill/);
    assertEnvelope(await apiError(client.messages.create({ model: 'tiny', max_tokens: 4, messages: [{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_x', content: 'hi' }] }] })), 400, 'invalid_request_error', /toolu_x/);
    const unanswered: Anthropic.MessageParam[] = [...ask, { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_a', name: 'get_time', input: { utc: true } }] }, { role: 'user', content: 'and?' }];
    assertEnvelope(await apiError(client.messages.create({ model: 'tiny', max_tokens: 4, tools, messages: unanswered })), 400, 'invalid_request_error', /toolu_a/);
  });

  test('an image block is refused: the local models take text only', async () => {
    const image: Anthropic.MessageParam = { role: 'user', content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } }, { type: 'text', text: 'What is this?' }] };
    assertEnvelope(await apiError(client.messages.create({ model: 'tiny', max_tokens: 4, messages: [image] })), 400, 'invalid_request_error', /"image" block.*text only/);
  });

  test('unknown model: 404 not_found_error, naming the models there are', async () => {
    assertEnvelope(await apiError(client.messages.create({ model: 'claude-local-none', max_tokens: 4, messages: ask })), 404, 'not_found_error', /claude-local-none.*Available models: .*tiny/);
  });

  test('malformed JSON is a 400, an oversized body a 413 request_too_large, an unknown sub-path a 404: all in the envelope', async () => {
    const bad = await post('{"model": "tiny",');
    assert.equal(bad.status, 400);
    assert.deepEqual(Object.keys(await bad.json() as object), ['type', 'error']);
    const big = await post(JSON.stringify({ model: 'tiny', max_tokens: 4, messages: [{ role: 'user', content: 'x'.repeat(300 * 1024) }] }));
    assert.equal(big.status, 413);
    assert.deepEqual(await big.json(), { type: 'error', error: { type: 'request_too_large', message: 'Request body is larger than this endpoint accepts.' } });
    const nowhere = await fetch(`${daemon.url}/v1/messages/batches`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    assert.equal(nowhere.status, 404);
    assert.equal((await nowhere.json() as { error: { type: string } }).error.type, 'not_found_error');
  });
});

describe('through an OpenAI-compatible upstream', () => {
  test('the same translation: a streamed upstream tool call becomes text and tool_use blocks, whole and streamed', async () => {
    const message = await client.messages.create({ model: 'up/m', max_tokens: 50, messages: ask, tools });
    assert.equal(message.model, 'up/m');
    assert.equal(message.stop_reason, 'tool_use');
    assert.deepEqual(message.content, [
      { type: 'text', text: 'Let me look. ' },
      { type: 'tool_use', id: 'toolu_w1', name: 'get_weather', input: { city: 'Oslo', unit: 'c' } },
    ]);
    assert.deepEqual([message.usage.input_tokens, message.usage.output_tokens], [21, 9]);
    const final = await client.messages.stream({ model: 'up/m', max_tokens: 50, messages: ask, tools }).finalMessage();
    assert.deepEqual(final.content, message.content);
    assert.equal(final.stop_reason, 'tool_use');
    const sent = upstream.requests.at(-1)!.body as { messages: { role: string }[]; tools: { function: { name: string } }[] };
    assert.deepEqual(sent.tools.map((t) => t.function.name), ['get_weather', 'get_time']);
  });

  test("local context stays local: svc's own tools offered to a remote model are refused, 403 permission_error", async () => {
    const error = await apiError(client.messages.create({
      model: 'far/m', max_tokens: 8, messages: ask,
      tools: [{ name: 'svc_search_space', input_schema: { type: 'object', properties: {} } }],
    }));
    assertEnvelope(error, 403, 'permission_error', /svc_search_space/);
  });
});
