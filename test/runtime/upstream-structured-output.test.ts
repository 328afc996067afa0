/**
 * The structured-output guarantee through an upstream, end to end: `svc serve` in front of a
 * scripted OpenAI-protocol server that answers structured requests with valid, truncated or
 * schema-breaking JSON (and calls), driven with the official `openai` client. Valid replies come
 * through as they are (the client's `parse` helpers get objects); broken ones that claim to be
 * complete are a 502 `upstream_structured_output_invalid` — whole, or as the stream's error
 * event after the deltas already sent, never a `stop`/`tool_calls` finish. The property over many
 * generated replies runs in process: test/inference/check-upstream-reply.test.ts.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import OpenAI from 'openai';
import { zodResponseFormat, zodTextFormat } from 'openai/helpers/zod';
import { z } from 'zod';
import { startDaemon, type DaemonProcess } from '../helpers/daemon-process.ts';
import { startScriptedUpstream, type ScriptedUpstream } from '../helpers/scripted-upstream.ts';
import { rejectionOf } from '../helpers/rejection-of.ts';

const Order = z.object({ kind: z.enum(['a', 'b']), n: z.number().int(), tags: z.array(z.string()).max(2) });
const ORDER = z.toJSONSchema(Order);

/** What the scripted upstream writes for each prompt: text (or arguments) and its finish reason. */
const REPLIES = new Map<string, { body: string; call?: boolean; finish: string }>([
  ['valid', { body: '{"kind":"a","n":3,"tags":["x"]}', finish: 'stop' }],
  ['truncated', { body: '{"kind":"a","n":3,"ta', finish: 'stop' }],
  ['breaking', { body: '{"kind":"c","n":3.5,"tags":[]}', finish: 'stop' }],
  ['cut', { body: '{"kind":"b","n":', finish: 'length' }],
  ['valid-call', { body: '{"kind":"b","n":1,"tags":[]}', call: true, finish: 'tool_calls' }],
  ['breaking-call', { body: '{"kind":"b","n":1,"tags":["a","b","c"]}', call: true, finish: 'tool_calls' }],
  ['truncated-call', { body: '{"kind":"b",', call: true, finish: 'tool_calls' }],
  ['no-call', { body: 'No.', finish: 'stop' }],
]);

let upstream: ScriptedUpstream;
let svc: DaemonProcess;
let client: OpenAI;

before(async () => {
  upstream = await startScriptedUpstream((request, res) => {
    const body = request.body as { messages?: { content: string }[]; input?: unknown };
    const reply = REPLIES.get(body.messages?.at(-1)?.content ?? '')!;
    // In pieces of 5 characters, as tokens arrive.
    const pieces = reply.body.match(/[\s\S]{1,5}/g)!;
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    pieces.forEach((piece, i) => {
      const delta = reply.call === true
        ? { tool_calls: [{ index: 0, ...(i === 0 ? { id: 'call_1', type: 'function' } : {}), function: { ...(i === 0 ? { name: 'order' } : {}), arguments: piece } }] }
        : { content: piece };
      res.write(`data: ${JSON.stringify({ choices: [{ index: 0, delta }] })}\n\n`);
    });
    res.write(`data: ${JSON.stringify({ choices: [{ index: 0, delta: {}, finish_reason: reply.finish }], usage: { prompt_tokens: 4, completion_tokens: pieces.length } })}\n\n`);
    res.end('data: [DONE]\n\n');
  });
  const dir = mkdtempSync(join(tmpdir(), 'svc-upstream-structured-'));
  const config = join(dir, 'config.toml');
  writeFileSync(config, `[[upstreams]]\nname = "up"\nbase_url = "${upstream.baseUrl}"\nmodels = ["m"]\n`);
  svc = await startDaemon({ withModel: false, args: ['--config', config] });
  client = new OpenAI({ baseURL: `${svc.url}/v1`, apiKey: 'none', maxRetries: 0 });
});

after(async () => {
  assert.equal(await svc.stop(), 0);
  await upstream.close();
});

const ask = (prompt: string) => ({ model: 'up/m', messages: [{ role: 'user' as const, content: prompt }] });
const tools: OpenAI.Chat.ChatCompletionTool[] = [{ type: 'function', function: { name: 'order', parameters: ORDER, strict: true } }];

const rejection = (promise: Promise<unknown>) => rejectionOf(promise, OpenAI.APIError);

function assertRefused(error: InstanceType<typeof OpenAI.APIError>, pattern: RegExp): void {
  assert.equal(error.code, 'upstream_structured_output_invalid');
  assert.equal(error.type, 'server_error');
  assert.match(error.message, /^(502 )?Upstream 'up' said its /);
  assert.match(error.message, pattern);
}

describe('chat completions through an upstream', () => {
  test('a valid reply comes through; the client\'s parse helper gets the object', async () => {
    const parsed = await client.chat.completions.parse({ ...ask('valid'), response_format: zodResponseFormat(Order, 'order') });
    assert.equal(parsed.choices[0]!.finish_reason, 'stop');
    assert.deepEqual(parsed.choices[0]!.message.parsed, { kind: 'a', n: 3, tags: ['x'] });
    const called = await client.chat.completions.create({ ...ask('valid-call'), tools, tool_choice: 'required' });
    assert.equal(called.choices[0]!.finish_reason, 'tool_calls');
    assert.deepEqual(Order.parse(JSON.parse(called.choices[0]!.message.tool_calls![0]!.type === 'function' ? called.choices[0]!.message.tool_calls![0]!.function.arguments : '')), { kind: 'b', n: 1, tags: [] });
  });

  test('truncated or schema-breaking JSON that claims stop is a 502, not a reply', async () => {
    const format = { type: 'json_schema' as const, json_schema: { name: 'order', schema: ORDER, strict: true } };
    const truncated = await rejection(client.chat.completions.create({ ...ask('truncated'), response_format: format }));
    assert.equal(truncated.status, 502);
    assertRefused(truncated, /reply was complete \(finish_reason stop\) but it is not complete JSON \(21 characters, ending "/);
    const breaking = await rejection(client.chat.completions.create({ ...ask('breaking'), response_format: format }));
    assert.equal(breaking.status, 502);
    assertRefused(breaking, /does not match the schema \(\/kind: /);
    // json_object: any object passes, anything incomplete does not.
    const object = await client.chat.completions.create({ ...ask('breaking'), response_format: { type: 'json_object' } });
    assert.equal(object.choices[0]!.finish_reason, 'stop');
    assertRefused(await rejection(client.chat.completions.create({ ...ask('truncated'), response_format: { type: 'json_object' } })), /not complete JSON/);
  });

  test('strict and forced calls are checked; a non-strict tool under auto passes as the upstream wrote it', async () => {
    assertRefused(await rejection(client.chat.completions.create({ ...ask('breaking-call'), tools })), /call of "order" was complete \(finish_reason tool_calls\) but it does not match the schema \(\/tags: /);
    assertRefused(await rejection(client.chat.completions.create({ ...ask('truncated-call'), tools })), /call of "order" .* is not complete JSON/);
    assertRefused(await rejection(client.chat.completions.create({ ...ask('no-call'), tools, tool_choice: 'required' })), /a tool call was required and none was made/);
    const loose = [{ ...tools[0]!, function: { ...(tools[0] as OpenAI.Chat.ChatCompletionFunctionTool).function, strict: false } }];
    const passed = await client.chat.completions.create({ ...ask('truncated-call'), tools: loose });
    assert.equal(passed.choices[0]!.finish_reason, 'tool_calls');
    assert.equal(passed.choices[0]!.message.tool_calls!.length, 1);
  });

  test('a reply the upstream cut itself stays length, with its partial text', async () => {
    const cut = await client.chat.completions.create({ ...ask('cut'), response_format: { type: 'json_object' } });
    assert.equal(cut.choices[0]!.finish_reason, 'length');
    assert.equal(cut.choices[0]!.message.content, '{"kind":"b","n":');
  });

  test('streamed: the deltas arrive, then an error event instead of the stop finish', async () => {
    for (const [prompt, extra] of [
      ['breaking', { response_format: zodResponseFormat(Order, 'order') }],
      ['truncated', { response_format: { type: 'json_object' as const } }],
      ['breaking-call', { tools }],
    ] as const) {
      const stream = await client.chat.completions.create({ ...ask(prompt), ...extra, stream: true });
      let text = '';
      const finishes: string[] = [];
      const error = await rejection((async () => {
        for await (const chunk of stream) {
          const choice = chunk.choices[0];
          text += choice?.delta.content ?? choice?.delta.tool_calls?.[0]?.function?.arguments ?? '';
          if (choice?.finish_reason != null) finishes.push(choice.finish_reason);
        }
      })());
      assert.ok(text.length > 5, `${prompt}: the deltas came first`);
      assert.deepEqual(finishes, [], `${prompt}: no finish`);
      assertRefused(error, /was complete/);
    }
    // A valid stream finishes as usual.
    const stream = await client.chat.completions.create({ ...ask('valid'), response_format: zodResponseFormat(Order, 'order'), stream: true });
    let text = '';
    let finish: string | null = null;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    assert.equal(finish, 'stop');
    assert.deepEqual(Order.parse(JSON.parse(text)), { kind: 'a', n: 3, tags: ['x'] });
  });
});

describe('the Responses API through an upstream', () => {
  test('valid: parsed by the client; schema-breaking: a 502', async () => {
    const parsed = await client.responses.parse({ model: 'up/m', input: 'valid', text: { format: zodTextFormat(Order, 'order') } });
    assert.equal(parsed.status, 'completed');
    assert.deepEqual(parsed.output_parsed, { kind: 'a', n: 3, tags: ['x'] });
    const error = await rejection(client.responses.create({ model: 'up/m', input: 'breaking', text: { format: zodTextFormat(Order, 'order') } }));
    assert.equal(error.status, 502);
    assertRefused(error, /does not match the schema/);
  });

  test('streamed: an error event and response.failed, never response.completed', async () => {
    const res = await fetch(`${svc.url}/v1/responses`, {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'up/m', input: 'truncated', stream: true, text: { format: { type: 'json_object' } } }),
    });
    assert.equal(res.status, 200);
    const types = (await res.text()).split('\n\n').map((e) => /^event: (.+)$/m.exec(e)?.[1]).filter((t) => t !== undefined);
    assert.ok(types.includes('response.output_text.delta'), types.join());
    assert.deepEqual(types.slice(-2), ['error', 'response.failed']);
    assert.ok(!types.includes('response.completed'), types.join());
  });
});
