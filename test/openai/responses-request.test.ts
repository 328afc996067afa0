import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { responseRequestSchema, type ResponseRequest } from '../../src/openai/openai-schemas.ts';
import type { LanguageModel } from '../../src/inference/language-model.ts';
import { samplingFrom } from '../../src/openai/sampling-from.ts';
import { refuseStateful, toResponseMessages, toResponseOptions, toResponseSettings, toResponsesError } from '../../src/openai/responses-request.ts';
import { ApiError } from '../../src/shared/api-error.ts';

function request(extra: Record<string, unknown>): ResponseRequest {
  return responseRequestSchema.parse({ model: 'm', input: 'hi', ...extra });
}

function refused(run: () => unknown, param: string, pattern?: RegExp): void {
  assert.throws(run, (error: unknown) => {
    assert.ok(error instanceof ApiError && error.status === 400, String(error));
    assert.equal(error.param, param);
    if (pattern !== undefined) assert.match(error.message, pattern);
    return true;
  });
}

describe('Responses input → engine turns', () => {
  it('instructions first, a string input as a user message, developer as system', () => {
    assert.deepEqual(toResponseMessages(request({ instructions: 'Be brief.' })), [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'hi' },
    ]);
    assert.deepEqual(toResponseMessages(request({ input: [{ role: 'developer', content: [{ type: 'input_text', text: 'a' }, { type: 'input_text', text: 'b' }] }] })), [
      { role: 'system', content: 'a\nb' },
    ]);
  });

  it('function_call items join the assistant turn before them; outputs answer them by call_id', () => {
    const messages = toResponseMessages(request({
      input: [
        { role: 'user', content: 'weather?' },
        { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Checking.' }] },
        { type: 'function_call', call_id: 'c1', name: 'w', arguments: '{"city":"A"}' },
        { type: 'function_call', call_id: 'c2', name: 'w', arguments: '{"city":"B"}' },
        { type: 'function_call_output', call_id: 'c1', output: '1' },
        { type: 'function_call_output', call_id: 'c2', output: [{ type: 'input_text', text: '2' }] },
      ],
    }));
    assert.deepEqual(messages, [
      { role: 'user', content: 'weather?' },
      { role: 'assistant', content: 'Checking.', toolCalls: [{ id: 'c1', name: 'w', arguments: '{"city":"A"}' }, { id: 'c2', name: 'w', arguments: '{"city":"B"}' }] },
      { role: 'tool', content: '1', toolCallId: 'c1' },
      { role: 'tool', content: '2', toolCallId: 'c2' },
    ]);
  });

  it('refuses non-text parts, unknown call ids and references to stored items', () => {
    refused(() => toResponseMessages(request({ input: [{ role: 'user', content: [{ type: 'input_image', image_url: 'x' }] }] })), 'input[0].content[0].type', /"input_image"/);
    refused(() => toResponseMessages(request({ input: [{ type: 'function_call_output', call_id: 'x', output: '1' }] })), 'input[0].call_id');
    refused(() => toResponseMessages(request({ input: [{ type: 'item_reference', id: 'msg_1' }] })), 'input[0]', /does not resolve item references/);
  });
});

describe('Responses options', () => {
  const fn = { type: 'function', name: 'w', parameters: { type: 'object', properties: {} } };

  it('takes flat function tools, tool_choice, parallel_tool_calls and text.format', () => {
    const options = toResponseOptions(request({
      tools: [fn], tool_choice: { type: 'function', name: 'w' }, parallel_tool_calls: false,
      text: { format: { type: 'json_schema', name: 'x', schema: { type: 'object' }, strict: true } },
    }));
    assert.deepEqual(options.tools, [{ name: 'w', description: undefined, parameters: { type: 'object', properties: {} }, strict: undefined }]);
    assert.deepEqual(options.toolChoice, { type: 'function', name: 'w' });
    assert.equal(options.parallelToolCalls, false);
    assert.deepEqual(options.responseFormat, { type: 'json_schema', name: 'x', schema: { type: 'object' }, strict: true });
  });

  it('refuses hosted tools, unknown tool_choice types and names not in tools', () => {
    refused(() => toResponseOptions(request({ tools: [{ type: 'file_search' }] })), 'tools[0].type', /"file_search"/);
    refused(() => toResponseOptions(request({ tools: [{ type: 'function', name: 'w', bogus: 1 }] })), 'tools.0.bogus');
    refused(() => toResponseOptions(request({ tools: [fn], tool_choice: { type: 'allowed_tools', mode: 'auto', tools: [] } })), 'tool_choice');
    refused(() => toResponseOptions(request({ tools: [fn], tool_choice: { type: 'function', name: 'other' } })), 'tool_choice.name');
    refused(() => toResponseOptions(request({ tools: [fn, fn] })), 'tools[1].name');
  });

  it('without a responses store refuses what needs one, naming the flag; with one, refuses only background and conversation', () => {
    refused(() => refuseStateful(request({ store: true })), 'store', /--responses-max-size 0/);
    refused(() => refuseStateful(request({ previous_response_id: 'resp_1' })), 'previous_response_id', /--responses-max-size 0/);
    refused(() => refuseStateful(request({ conversation: 'conv_1' })), 'conversation', /previous_response_id/);
    refused(() => refuseStateful(request({ background: true })), 'background', /not supported/);
    refuseStateful(request({ store: false, include: [], truncation: 'disabled', reasoning: {} }));
    refuseStateful(request({ store: true, previous_response_id: 'resp_1' }), 'http', true);
    refused(() => refuseStateful(request({ background: true }), 'http', true), 'background', /not supported/);
    refused(() => refuseStateful(request({ conversation: 'conv_1' }), 'http', true), 'conversation', /not supported/);
  });

  it("renames the engine's chat-completions params to the Responses API's", () => {
    const renamed = (param: string, message: string) => toResponsesError(ApiError.invalidRequest(message, param)) as ApiError;
    assert.equal(renamed('messages', 'x').param, 'input');
    assert.equal(renamed('max_tokens', 'x').param, 'max_output_tokens');
    const schema = renamed('tools[3].function.parameters', 'tools[3].function.parameters at /a: bad');
    assert.equal(schema.param, 'tools[3].parameters');
    assert.equal(schema.message, 'tools[3].parameters at /a: bad');
    assert.equal(renamed('response_format.json_schema.schema', 'x').param, 'text.format.schema');
    assert.equal(renamed('seed', 'x').param, 'seed');
  });
});

describe('Responses settings echoed in the Response object', () => {
  const local = { id: 'tiny' } as LanguageModel;
  const remote = { id: 'gpt', plane: 'remote' } as LanguageModel;
  const settingsOf = (body: ResponseRequest, model: LanguageModel) => toResponseSettings(body, model, samplingFrom(body, body.max_output_tokens));

  it('fills in what applied where the request is silent: local defaults, OpenAI defaults for an upstream', () => {
    const body = request({});
    assert.deepEqual(settingsOf(body, local), {
      model: 'tiny', store: false, previousResponseId: null, instructions: null, maxOutputTokens: null, temperature: 0.8, topP: 0.95, presencePenalty: 0,
      frequencyPenalty: 0, topLogprobs: 0, parallelToolCalls: true, toolChoice: 'auto', tools: [], text: { format: { type: 'text' } },
      truncation: 'disabled', serviceTier: 'default', safetyIdentifier: null, promptCacheKey: null, metadata: {}, user: null,
    });
    const upstream = settingsOf(body, remote);
    assert.equal(upstream.temperature, 1);
    assert.equal(upstream.topP, 1);
  });

  it("echoes the request's values and each function tool whole", () => {
    const body = request({
      temperature: 0.2, top_p: 0.5, presence_penalty: 0.5, frequency_penalty: -1, service_tier: 'flex', safety_identifier: 'u1',
      prompt_cache_key: 'k', max_output_tokens: 9, tools: [{ type: 'function', name: 'f' }, { type: 'function', name: 'g', description: 'G', parameters: { type: 'object' }, strict: true }],
    });
    const settings = settingsOf(body, remote);
    assert.deepEqual([settings.temperature, settings.topP, settings.presencePenalty, settings.frequencyPenalty], [0.2, 0.5, 0.5, -1]);
    assert.deepEqual([settings.serviceTier, settings.safetyIdentifier, settings.promptCacheKey, settings.maxOutputTokens], ['flex', 'u1', 'k', 9]);
    assert.deepEqual(settings.tools, [
      { type: 'function', name: 'f', description: null, parameters: null, strict: null },
      { type: 'function', name: 'g', description: 'G', parameters: { type: 'object' }, strict: true },
    ]);
  });

  it('takes frequency_penalty and presence_penalty within [-2, 2] to the engine', () => {
    const sampling = samplingFrom(request({ frequency_penalty: 1.5, presence_penalty: -0.5 }), null);
    assert.equal(sampling.frequencyPenalty, 1.5);
    assert.equal(sampling.presencePenalty, -0.5);
    assert.throws(() => request({ presence_penalty: 3 }));
  });
});
