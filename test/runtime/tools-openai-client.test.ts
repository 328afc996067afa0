/**
 * End to end with the official `openai` client: tools, tool_choice, tool results, structured
 * output (chat completions) and the Responses API, on the real daemon and the tiny random-weight
 * fixture. The model writes garbage wherever it may, so every check here is about what the
 * grammar guarantees: a call of the right function whose arguments match its schema, JSON that
 * matches the requested schema, and streams that add up to the whole reply.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import OpenAI from 'openai';
import { zodResponseFormat, zodTextFormat } from 'openai/helpers/zod';
import { z } from 'zod';
import { startDaemon, startDaemonWithClient, type DaemonProcess, readRest } from '../helpers/daemon-process.ts';

let daemon: DaemonProcess;
let client: OpenAI;

before(async () => {
  ({ daemon, client } = await startDaemonWithClient());
});
after(async () => {
  assert.equal(await daemon.stop(), 0);
});

// Bounded strings and enums keep the random model's replies short enough to finish.
const weatherParams = {
  type: 'object',
  properties: { city: { type: 'string', maxLength: 12 }, unit: { type: 'string', enum: ['c', 'f'] } },
  required: ['city', 'unit'],
  additionalProperties: false,
};
const timeParams = { type: 'object', properties: { utc: { type: 'boolean' } }, required: ['utc'], additionalProperties: false };
const tools: OpenAI.Chat.ChatCompletionTool[] = [
  { type: 'function', function: { name: 'get_weather', description: 'Weather in a city', parameters: weatherParams, strict: true } },
  { type: 'function', function: { name: 'get_time', description: 'The time', parameters: timeParams, strict: true } },
];
const validators = new Map<string, z.ZodType>([
  ['get_weather', z.fromJSONSchema(weatherParams as Parameters<typeof z.fromJSONSchema>[0])],
  ['get_time', z.fromJSONSchema(timeParams as Parameters<typeof z.fromJSONSchema>[0])],
]);

/** A call is well-formed: an OpenAI id, a known function, arguments that match its schema. */
function assertValidCall(call: { id?: string; type?: string; function?: { name: string; arguments: string } } | undefined, name?: string): void {
  assert.ok(call?.function !== undefined, 'a function call');
  assert.match(call.id ?? '', /^call_/);
  if (name !== undefined) assert.equal(call.function.name, name);
  const validator = validators.get(call.function.name);
  assert.ok(validator !== undefined, `known function: ${call.function.name}`);
  const parsed = validator.safeParse(JSON.parse(call.function.arguments));
  assert.ok(parsed.success, `${call.function.arguments}: ${parsed.error?.message}`);
}

const ask = [{ role: 'user', content: 'What is the weather in Paris?' }] satisfies OpenAI.Chat.ChatCompletionMessageParam[];

describe('chat completions: tools', () => {
  test("tool_choice 'required' always yields a valid call, content null and finish_reason tool_calls", async () => {
    for (const seed of [1, 2, 3]) {
      const completion = await client.chat.completions.create({ model: 'tiny', messages: ask, tools, tool_choice: 'required', temperature: 1, seed, max_tokens: 200 });
      const choice = completion.choices[0]!;
      assert.equal(choice.finish_reason, 'tool_calls');
      assert.equal(choice.message.content, null);
      assert.ok((choice.message.tool_calls?.length ?? 0) >= 1);
      for (const call of choice.message.tool_calls!) assertValidCall(call);
    }
  });

  test('a named function is the one called, every time', async () => {
    for (const seed of [1, 2, 3, 4]) {
      const completion = await client.chat.completions.create({
        model: 'tiny', messages: ask, tools, tool_choice: { type: 'function', function: { name: 'get_time' } }, temperature: 1, seed, max_tokens: 200,
      });
      assert.equal(completion.choices[0]!.finish_reason, 'tool_calls');
      assert.equal(completion.choices[0]!.message.tool_calls?.length, 1);
      assertValidCall(completion.choices[0]!.message.tool_calls![0], 'get_time');
    }
  });

  test("tool_choice 'none' never calls", async () => {
    for (const seed of [1, 2]) {
      const completion = await client.chat.completions.create({ model: 'tiny', messages: ask, tools, tool_choice: 'none', temperature: 1, seed, max_tokens: 24 });
      const choice = completion.choices[0]!;
      assert.equal(choice.message.tool_calls, undefined);
      assert.equal(typeof choice.message.content, 'string');
      assert.notEqual(choice.finish_reason, 'tool_calls');
    }
  });

  test("tool_choice 'auto': whatever comes back is well-formed", async () => {
    for (const seed of [1, 2, 3]) {
      const completion = await client.chat.completions.create({ model: 'tiny', messages: ask, tools, temperature: 1, seed, max_tokens: 64 });
      const choice = completion.choices[0]!;
      if (choice.finish_reason === 'tool_calls') {
        for (const call of choice.message.tool_calls!) assertValidCall(call);
      } else {
        assert.ok(choice.finish_reason === 'stop' || choice.finish_reason === 'length');
        assert.equal(typeof choice.message.content, 'string');
      }
    }
  });

  // The fixture's ChatML syntax holds one call per turn anyway; parallel calls, and this limit on
  // them, are tested on a wrapper that allows several in test/inference/llama-tool-calls.test.ts.
  test('parallel_tool_calls false is taken end to end: one call', async () => {
    const completion = await client.chat.completions.create({
      model: 'tiny', messages: ask, tools, tool_choice: 'required', parallel_tool_calls: false, temperature: 1, seed: 5, max_tokens: 200,
    });
    assert.equal(completion.choices[0]!.message.tool_calls?.length, 1);
  });

  test('streamed tool-call deltas reassemble to the same call as the whole reply', async () => {
    const request = { model: 'tiny', messages: ask, tools, tool_choice: 'required' as const, temperature: 1, seed: 7, max_tokens: 200 };
    const whole = await client.chat.completions.create(request);
    const stream = await client.chat.completions.create({ ...request, stream: true });
    const calls: { id: string; name: string; arguments: string }[] = [];
    let finish: string | null = null;
    for await (const chunk of stream) {
      const choice = chunk.choices[0];
      if (choice === undefined) continue;
      for (const delta of choice.delta.tool_calls ?? []) {
        if (delta.id !== undefined) calls[delta.index] = { id: delta.id, name: delta.function?.name ?? '', arguments: '' };
        calls[delta.index]!.arguments += delta.function?.arguments ?? '';
      }
      finish = choice.finish_reason ?? finish;
    }
    assert.equal(finish, 'tool_calls');
    const expected = whole.choices[0]!.message.tool_calls!.map((c) => (c.type === 'function' ? [c.function.name, c.function.arguments] : []));
    assert.deepEqual(calls.map((c) => [c.name, c.arguments]), expected);
    for (const call of calls) assertValidCall({ id: call.id, function: call });
  });

  test('a tool result continues the conversation, in text or with another call', async () => {
    const first = await client.chat.completions.create({ model: 'tiny', messages: ask, tools, tool_choice: 'required', temperature: 1, seed: 3, max_tokens: 200 });
    const call = first.choices[0]!.message.tool_calls![0]!;
    const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [
      ...ask,
      first.choices[0]!.message,
      { role: 'tool', tool_call_id: call.id, content: JSON.stringify({ celsius: 21 }) },
    ];
    const answer = await client.chat.completions.create({ model: 'tiny', messages, tools, tool_choice: 'none', temperature: 0, max_tokens: 12 });
    assert.equal(typeof answer.choices[0]!.message.content, 'string');
    const without = await client.chat.completions.create({ model: 'tiny', messages: ask, tools, tool_choice: 'none', temperature: 0, max_tokens: 1 });
    assert.ok(answer.usage!.prompt_tokens > without.usage!.prompt_tokens + 10, 'the call and its result are in the prompt');
    const again = await client.chat.completions.create({ model: 'tiny', messages, tools, tool_choice: 'required', temperature: 1, seed: 4, max_tokens: 200 });
    assertValidCall(again.choices[0]!.message.tool_calls![0]);
    // Without the tool message the conversation is incomplete, as OpenAI answers.
    await assert.rejects(
      client.chat.completions.create({ model: 'tiny', messages: messages.slice(0, 2), tools, max_tokens: 4 }),
      (error: unknown) => error instanceof OpenAI.BadRequestError && /no tool result/.test(error.message),
    );
  });

  test('a tool schema the grammar cannot enforce is a 400 naming the keyword and the tool', async () => {
    await assert.rejects(
      client.chat.completions.create({
        model: 'tiny', messages: ask, max_tokens: 4,
        tools: [tools[0]!, { type: 'function', function: { name: 'mail', parameters: { type: 'object', properties: { to: { type: 'string', format: 'email' } } } } }],
      }),
      (error: unknown) => {
        assert.ok(error instanceof OpenAI.BadRequestError);
        assert.equal(error.param, 'tools[1].function.parameters');
        assert.equal(error.code, 'unsupported_schema');
        assert.match(error.message, /\/properties\/to\/format/);
        return true;
      },
    );
  });
});

describe('chat completions: structured output', () => {
  test('json_object replies parse to objects', async () => {
    for (const seed of [1, 2, 3]) {
      const completion = await client.chat.completions.create({
        model: 'tiny', messages: [{ role: 'user', content: 'json' }], response_format: { type: 'json_object' }, temperature: 1, seed, max_tokens: 400,
      });
      assert.equal(completion.choices[0]!.finish_reason, 'stop');
      const value: unknown = JSON.parse(completion.choices[0]!.message.content!);
      assert.ok(typeof value === 'object' && value !== null && !Array.isArray(value));
    }
  });

  test('json_schema (strict, from zod) replies parse and validate, streamed or not', async () => {
    const Event = z.object({
      title: z.string().max(16),
      day: z.enum(['mon', 'tue', 'wed']),
      attendees: z.array(z.object({ name: z.string().max(8), vip: z.boolean() })).max(3),
      note: z.string().max(10).nullable(),
    });
    for (const seed of [1, 2, 3]) {
      const completion = await client.chat.completions.parse({
        model: 'tiny', messages: [{ role: 'user', content: 'Make an event.' }], response_format: zodResponseFormat(Event, 'event'), temperature: 1, seed, max_tokens: 400,
      });
      const message = completion.choices[0]!.message;
      assert.equal(completion.choices[0]!.finish_reason, 'stop');
      assert.ok(message.parsed !== null, 'the client parsed and validated it with the zod schema');
      assert.deepEqual(Event.parse(JSON.parse(message.content!)), message.parsed);
    }
    const request = { model: 'tiny', messages: [{ role: 'user' as const, content: 'Make an event.' }], response_format: zodResponseFormat(Event, 'event'), temperature: 1, seed: 9, max_tokens: 400 };
    const whole = await client.chat.completions.create(request);
    let streamed = '';
    for await (const chunk of await client.chat.completions.create({ ...request, stream: true })) streamed += chunk.choices[0]?.delta.content ?? '';
    assert.equal(streamed, whole.choices[0]!.message.content);
    Event.parse(JSON.parse(streamed));
  });

  test('stop sequences do not cut a structured reply: chat.completions.parse still returns the parsed object', async () => {
    const Pick = z.object({ kind: z.enum(['a', 'b']), n: z.int(), tag: z.string().max(4) });
    for (const seed of [1, 2, 3]) {
      const request = { model: 'tiny', messages: [{ role: 'user' as const, content: 'Pick one.' }], response_format: zodResponseFormat(Pick, 'pick'), temperature: 1, seed, max_tokens: 200 };
      // Characters every JSON object holds: a stop sequence that cut the value would leave "{".
      const completion = await client.chat.completions.parse({ ...request, stop: ['"', ',', '}', ':'] });
      assert.equal(completion.choices[0]!.finish_reason, 'stop');
      assert.ok(completion.choices[0]!.message.parsed !== null);
      assert.deepEqual(completion.choices[0]!.message.parsed, Pick.parse(JSON.parse((await client.chat.completions.create(request)).choices[0]!.message.content!)));
    }
  });

  test('cut by max_tokens: finish_reason length (the JSON is incomplete, as with OpenAI)', async () => {
    const completion = await client.chat.completions.create({
      model: 'tiny', messages: [{ role: 'user', content: 'json' }], response_format: { type: 'json_object' }, temperature: 1, seed: 2, max_tokens: 5,
    });
    assert.equal(completion.choices[0]!.finish_reason, 'length');
    assert.ok(completion.choices[0]!.message.content!.startsWith('{'));
  });

  test('an unsupported keyword is a 400 naming it, before any generation', async () => {
    await assert.rejects(
      client.chat.completions.create({
        model: 'tiny', messages: ask, max_tokens: 4,
        response_format: { type: 'json_schema', json_schema: { name: 'x', strict: true, schema: { type: 'object', properties: { code: { type: 'array', items: { type: 'string' }, uniqueItems: true } } } } },
      }),
      (error: unknown) => {
        assert.ok(error instanceof OpenAI.BadRequestError);
        assert.equal(error.param, 'response_format.json_schema.schema');
        assert.match(error.message, /'uniqueItems'/);
        assert.match(error.message, /\/properties\/code/);
        return true;
      },
    );
  });

  test("response_format with tools under 'auto' is refused rather than one of them ignored", async () => {
    await assert.rejects(
      client.chat.completions.create({ model: 'tiny', messages: ask, tools, response_format: { type: 'json_object' }, max_tokens: 4 }),
      (error: unknown) => error instanceof OpenAI.BadRequestError && error.param === 'response_format',
    );
  });
});

describe('responses', () => {
  test('plain: output text, usage, status', async () => {
    const response = await client.responses.create({ model: 'tiny', input: 'Say hello.', instructions: 'Be brief.', max_output_tokens: 8, temperature: 0 });
    assert.match(response.id, /^resp_/);
    assert.equal(response.object, 'response');
    assert.equal(response.status, 'incomplete');
    assert.deepEqual(response.incomplete_details, { reason: 'max_output_tokens' });
    assert.equal(response.output.length, 1);
    const message = response.output[0]!;
    assert.equal(message.type, 'message');
    assert.ok(response.output_text.length > 0);
    assert.equal(response.usage?.output_tokens, 8);
    assert.equal(response.usage!.total_tokens, response.usage!.input_tokens + 8);
    assert.equal(response.instructions, 'Be brief.');
  });

  test('streamed: the event sequence in order, numbered, adding up to the whole response', async () => {
    const request = { model: 'tiny', input: 'Say hello.', max_output_tokens: 8, temperature: 0 };
    const whole = await client.responses.create(request);
    const events: OpenAI.Responses.ResponseStreamEvent[] = [];
    for await (const event of await client.responses.create({ ...request, stream: true })) events.push(event);
    const types = events.map((e) => e.type);
    const deltas = types.filter((t) => t === 'response.output_text.delta').length;
    assert.ok(deltas >= 1);
    assert.deepEqual(types, [
      'response.created', 'response.in_progress', 'response.output_item.added', 'response.content_part.added',
      ...Array<string>(deltas).fill('response.output_text.delta'),
      'response.output_text.done', 'response.content_part.done', 'response.output_item.done', 'response.incomplete',
    ]);
    assert.deepEqual(events.map((e) => e.sequence_number), events.map((_e, i) => i));
    const text = events.flatMap((e) => (e.type === 'response.output_text.delta' ? [e.delta] : [])).join('');
    assert.equal(text, whole.output_text);
    const last = events.at(-1)!;
    assert.ok(last.type === 'response.incomplete');
    assert.equal(last.response.usage?.output_tokens, 8);
    assert.equal(last.response.output[0]?.type === 'message' ? last.response.output[0].content[0]?.type : undefined, 'output_text');
  });

  const responseTools: OpenAI.Responses.FunctionTool[] = [
    { type: 'function', name: 'get_weather', description: 'Weather in a city', parameters: weatherParams, strict: true },
    { type: 'function', name: 'get_time', parameters: timeParams, strict: true },
  ];

  test('tools: a function_call item, streamed as argument deltas, answered with function_call_output', async () => {
    const request = { model: 'tiny', input: 'Weather in Paris?', tools: responseTools, tool_choice: 'required' as const, temperature: 1, top_p: 1, max_output_tokens: 200 };
    const whole = await client.responses.create(request);
    assert.equal(whole.status, 'completed');
    const call = whole.output.find((item) => item.type === 'function_call');
    assert.ok(call !== undefined && call.type === 'function_call');
    assertValidCall({ id: call.call_id, function: { name: call.name, arguments: call.arguments } });

    const events: OpenAI.Responses.ResponseStreamEvent[] = [];
    for await (const event of await client.responses.create({ ...request, tool_choice: { type: 'function', name: 'get_time' }, stream: true })) events.push(event);
    assert.deepEqual(events.slice(0, 3).map((e) => e.type), ['response.created', 'response.in_progress', 'response.output_item.added']);
    const added = events[2]!;
    assert.ok(added.type === 'response.output_item.added' && added.item.type === 'function_call' && added.item.name === 'get_time');
    const args = events.flatMap((e) => (e.type === 'response.function_call_arguments.delta' ? [e.delta] : [])).join('');
    const done = events.find((e) => e.type === 'response.function_call_arguments.done');
    assert.ok(done?.type === 'response.function_call_arguments.done');
    assert.equal(done.arguments, args);
    assertValidCall({ id: added.item.call_id, function: { name: 'get_time', arguments: args } }, 'get_time');
    assert.deepEqual(events.slice(-2).map((e) => e.type), ['response.output_item.done', 'response.completed']);

    const next = await client.responses.create({
      model: 'tiny', tools: responseTools, tool_choice: 'none', max_output_tokens: 8, temperature: 0,
      input: [
        { role: 'user', content: 'Weather in Paris?' },
        { type: 'function_call', call_id: call.call_id, name: call.name, arguments: call.arguments },
        { type: 'function_call_output', call_id: call.call_id, output: '{"celsius":21}' },
      ],
    });
    assert.equal(next.output[0]?.type, 'message');
    const without = await client.responses.create({ model: 'tiny', tools: responseTools, tool_choice: 'none', max_output_tokens: 1, input: 'Weather in Paris?' });
    assert.ok(next.usage!.input_tokens > without.usage!.input_tokens + 10, 'the call and its output are in the prompt');
  });

  test('text.format json_schema: the output text validates', async () => {
    const Answer = z.object({ ok: z.boolean(), items: z.array(z.enum(['x', 'y'])).max(4) });
    const response = await client.responses.parse({
      model: 'tiny', input: 'Answer in JSON.', text: { format: zodTextFormat(Answer, 'answer') }, temperature: 1, max_output_tokens: 200,
    });
    assert.equal(response.status, 'completed');
    assert.deepEqual(response.output_parsed, Answer.parse(JSON.parse(response.output_text)));
  });

  test('stateful requests and foreign tools are refused with the reason; params use Responses names', async () => {
    const refused = async (body: Record<string, unknown>, param: string, pattern: RegExp) => {
      await assert.rejects(client.responses.create({ model: 'tiny', input: 'x', ...body } as OpenAI.Responses.ResponseCreateParamsNonStreaming), (error: unknown) => {
        assert.ok(error instanceof OpenAI.BadRequestError, String(error));
        assert.equal(error.param, param);
        assert.match(error.message, pattern);
        return true;
      });
    };
    await refused({ previous_response_id: 'resp_123' }, 'previous_response_id', /not found/);
    await refused({ background: true }, 'background', /not supported/);
    await refused({ input: [{ type: 'item_reference', id: 'msg_1' }] }, 'input[0]', /does not resolve item references/);
    await refused({ tools: [{ type: 'web_search' }] }, 'tools[0].type', /function tools only/);
    await refused({ tools: [{ type: 'function', name: 'f', parameters: { type: 'object', properties: { a: { type: 'string', pattern: 'x' } } } }] }, 'tools[0].parameters', /'pattern'/);
    await refused({ text: { format: { type: 'json_schema', name: 'x', schema: { type: 'object', properties: { n: { type: 'array', items: { type: 'number' }, uniqueItems: true } } } } } }, 'text.format.schema', /'uniqueItems'/);
    await refused({ input: [{ type: 'function_call_output', call_id: 'nope', output: '1' }] }, 'input[0].call_id', /no function_call/);
  });
});

describe('responses: an error once the stream is open', () => {
  test('SIGTERM mid-stream ends it with an error event and response.failed, without [DONE]', async () => {
    const doomed = await startDaemon({ args: ['--shutdown-timeout', '300ms', '--context-size', '8192'] });
    const res = await fetch(`${doomed.url}/v1/responses`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'tiny', input: 'A long story.', max_output_tokens: 8000, temperature: 1, stream: true }),
    });
    assert.equal(res.status, 200);
    const reader = res.body!.getReader();
    const first = await reader.read();
    assert.ok(!first.done);
    const code = doomed.stop('SIGTERM');
    const text = await readRest(reader, first.value);
    assert.equal(await code, 0);
    const events = text.trim().split('\n\n').map((block) => {
      const [eventLine, dataLine] = block.split('\n');
      return { event: eventLine!.replace(/^event: /, ''), data: JSON.parse(dataLine!.replace(/^data: /, '')) as Record<string, unknown> };
    });
    assert.deepEqual(events.slice(-2).map((e) => e.event), ['error', 'response.failed']);
    assert.equal(events.at(-2)!.data.code, 'server_shutting_down');
    const failed = events.at(-1)!.data.response as { status: string; error: { code: string } };
    assert.equal(failed.status, 'failed');
    assert.equal(failed.error.code, 'server_shutting_down');
    assert.deepEqual(events.map((e) => e.data.sequence_number), events.map((_e, i) => i));
    assert.ok(!text.includes('[DONE]'));
  });
});
