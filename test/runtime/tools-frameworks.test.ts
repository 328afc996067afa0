/**
 * End to end with the agent frameworks people point at OpenAI-compatible servers: LangChain's
 * ChatOpenAI (bindTools, withStructuredOutput in each method, also over the Responses API) and
 * the Vercel AI SDK (generateObject, generateText with tools, streamText; chat and responses
 * models, and the openai-compatible provider). Each sends its own flavour of JSON Schema and
 * parses the reply with the zod schema it started from, so a pass means the client got a valid
 * object or call, not that our own checks agreed with themselves.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createOpenAI, type OpenAIProvider } from '@ai-sdk/openai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { tool as langchainTool } from '@langchain/core/tools';
import { ChatOpenAI } from '@langchain/openai';
import { generateObject, generateText, streamText, tool } from 'ai';
import { z } from 'zod';
import { startDaemon, type DaemonProcess } from '../helpers/daemon-process.ts';

let daemon: DaemonProcess;
let baseURL: string;
before(async () => {
  daemon = await startDaemon();
  baseURL = `${daemon.url}/v1`;
});
after(async () => {
  assert.equal(await daemon.stop(), 0);
});

// Bounded strings and arrays keep the random model's replies short enough to finish.
const Weather = z.object({ city: z.string().max(12), unit: z.enum(['c', 'f']) });
const Recipe = z.object({
  name: z.string().max(16).describe('the dish'),
  servings: z.int(),
  vegetarian: z.boolean(),
  steps: z.array(z.string().max(12)).max(3),
  note: z.string().max(8).nullable(),
});

describe('LangChain ChatOpenAI', () => {
  const chat = (seed: number, extra: Partial<ConstructorParameters<typeof ChatOpenAI>[0]> = {}) => new ChatOpenAI({
    model: 'tiny', apiKey: 'none', configuration: { baseURL }, temperature: 1, maxTokens: 300, maxRetries: 0, modelKwargs: { seed }, ...extra,
  });
  const getWeather = langchainTool(async () => '21', { name: 'get_weather', description: 'Weather in a city', schema: Weather });
  const getTime = langchainTool(async () => '12:00', { name: 'get_time', description: 'The time', schema: z.object({ utc: z.boolean() }) });

  test('bindTools with tool_choice any / a name → tool_calls on the AIMessage, with parsed args', async () => {
    for (const seed of [1, 2]) {
      const any = await chat(seed).bindTools([getWeather, getTime], { tool_choice: 'any' }).invoke('Weather in Paris?');
      assert.equal(any.tool_calls?.length, 1);
      const call = any.tool_calls![0]!;
      assert.match(call.id ?? '', /^call_/);
      (call.name === 'get_weather' ? Weather : z.object({ utc: z.boolean() })).parse(call.args);
      const named = await chat(seed).bindTools([getWeather, getTime], { tool_choice: 'get_weather' }).invoke('Weather in Paris?');
      assert.equal(named.tool_calls?.[0]?.name, 'get_weather');
      Weather.parse(named.tool_calls![0]!.args);
    }
  });

  test('streamed tool-call chunks concatenate to the same call', async () => {
    const model = chat(3).bindTools([getWeather], { tool_choice: 'get_weather' });
    const whole = await model.invoke('Weather in Rome?');
    let merged: Awaited<ReturnType<typeof model.invoke>> | undefined;
    for await (const chunk of await model.stream('Weather in Rome?')) merged = merged === undefined ? chunk : merged.concat(chunk);
    assert.deepEqual(merged?.tool_calls?.map((c) => [c.name, c.args]), whole.tool_calls?.map((c) => [c.name, c.args]));
  });

  test('bindTools over the Responses API (useResponsesApi)', async () => {
    // The Responses API has no seed (svc refuses it, as OpenAI does): no modelKwargs here.
    const message = await chat(4, { useResponsesApi: true, modelKwargs: {} }).bindTools([getWeather], { tool_choice: 'get_weather' }).invoke('Weather in Oslo?');
    assert.equal(message.tool_calls?.[0]?.name, 'get_weather');
    Weather.parse(message.tool_calls![0]!.args);
  });

  for (const method of [undefined, 'jsonSchema', 'functionCalling', 'jsonMode'] as const) {
    test(`withStructuredOutput (${method ?? 'default'} method) → a parsed object`, async () => {
      for (const seed of [1, 2]) {
        const structured = chat(seed).withStructuredOutput(Recipe, { name: 'recipe', ...(method !== undefined ? { method } : {}) });
        // jsonMode is json_object: any object comes back, so only the shape is LangChain's to check.
        if (method === 'jsonMode') {
          const raw = await chat(seed).withStructuredOutput(z.looseObject({}), { method }).invoke('A recipe in JSON.');
          assert.equal(typeof raw, 'object');
          continue;
        }
        const recipe = await structured.invoke('A recipe, please.');
        assert.deepEqual(recipe, Recipe.parse(recipe));
      }
    });
  }
});

describe('Vercel AI SDK', () => {
  let openai: OpenAIProvider;
  before(() => {
    openai = createOpenAI({ baseURL, apiKey: 'none' });
  });
  const weatherTool = tool({ description: 'Weather in a city', inputSchema: Weather });
  // The Responses API has no seed; the grammar makes the reply valid whatever is sampled.
  const seeded = (kind: 'chat' | 'responses', seed: number) => (kind === 'chat' ? { seed } : {});

  for (const kind of ['chat', 'responses'] as const) {
    test(`${kind}: generateObject with a zod schema`, async () => {
      for (const seed of [1, 2]) {
        const { object, finishReason } = await generateObject({
          model: openai[kind]('tiny'), schema: Recipe, prompt: 'A recipe, please.', temperature: 1, ...seeded(kind, seed), maxOutputTokens: 400, maxRetries: 0,
        });
        assert.equal(finishReason, 'stop');
        assert.deepEqual(object, Recipe.parse(object));
      }
    });

    test(`${kind}: generateText with tools and toolChoice required`, async () => {
      for (const seed of [1, 2]) {
        const result = await generateText({
          model: openai[kind]('tiny'), tools: { get_weather: weatherTool }, toolChoice: 'required', prompt: 'Weather in Paris?',
          temperature: 1, ...seeded(kind, seed), maxOutputTokens: 300, maxRetries: 0,
        });
        assert.equal(result.finishReason, 'tool-calls');
        assert.equal(result.toolCalls.length, 1);
        const call = result.toolCalls[0]!;
        assert.equal(call.toolName, 'get_weather');
        Weather.parse(call.input);
      }
    });

    test(`${kind}: streamText streams the same text generateText returns`, async () => {
      const settings = { model: openai[kind]('tiny'), prompt: 'Tell me something.', temperature: 0, maxOutputTokens: 12, maxRetries: 0 };
      const whole = await generateText(settings);
      const stream = streamText(settings);
      let text = '';
      for await (const delta of stream.textStream) text += delta;
      assert.ok(text.length > 0);
      assert.equal(text, whole.text);
      assert.equal(await stream.finishReason, 'length');
      assert.equal((await stream.usage).outputTokens, 12);
    });
  }

  test('streamText with a tool: the streamed call is complete and valid', async () => {
    const stream = streamText({
      model: openai.chat('tiny'), tools: { get_weather: weatherTool }, toolChoice: { type: 'tool', toolName: 'get_weather' },
      prompt: 'Weather in Lima?', temperature: 1, seed: 5, maxOutputTokens: 300, maxRetries: 0,
    });
    const calls = await stream.toolCalls;
    assert.equal(calls.length, 1);
    Weather.parse(calls[0]!.input);
    assert.equal(await stream.finishReason, 'tool-calls');
  });

  test('@ai-sdk/openai-compatible: generateObject with structured outputs', async () => {
    const provider = createOpenAICompatible({ name: 'svc', baseURL, supportsStructuredOutputs: true });
    const { object } = await generateObject({
      model: provider.chatModel('tiny'), schema: Recipe, prompt: 'A recipe, please.', temperature: 1, seed: 3, maxOutputTokens: 400, maxRetries: 0,
    });
    assert.deepEqual(object, Recipe.parse(object));
  });
});
