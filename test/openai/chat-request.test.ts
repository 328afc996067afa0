import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ApiError } from '../../src/shared/api-error.ts';
import { toChatMessages, toChatOptions } from '../../src/openai/chat-request.ts';
import { chatCompletionRequestSchema, type ChatCompletionRequest } from '../../src/openai/openai-schemas.ts';

const weather = { type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } } };

function request(extra: Record<string, unknown>): ChatCompletionRequest {
  return chatCompletionRequestSchema.parse({ model: 'm', messages: [{ role: 'user', content: 'hi' }], ...extra });
}

function refused(run: () => unknown, param: string): void {
  assert.throws(run, (error: unknown) => error instanceof ApiError && error.status === 400 && error.param === param);
}

describe('chat request → engine options', () => {
  it('turns tools, tool_choice, parallel_tool_calls and response_format into engine options', () => {
    const options = toChatOptions(request({
      tools: [weather],
      tool_choice: { type: 'function', function: { name: 'get_weather' } },
      parallel_tool_calls: false,
      response_format: { type: 'json_schema', json_schema: { name: 'w', schema: { type: 'object' }, strict: true } },
    }));
    assert.deepEqual(options.tools?.map((t) => t.name), ['get_weather']);
    assert.deepEqual(options.toolChoice, { type: 'function', name: 'get_weather' });
    assert.equal(options.parallelToolCalls, false);
    assert.deepEqual(options.responseFormat, { type: 'json_schema', name: 'w', schema: { type: 'object' }, strict: true });
  });

  it('refuses a tool_choice naming a function that is not in tools, and required without tools', () => {
    refused(() => toChatOptions(request({ tools: [weather], tool_choice: { type: 'function', function: { name: 'constructor' } } })), 'tool_choice.function.name');
    refused(() => toChatOptions(request({ tool_choice: 'required' })), 'tool_choice');
  });

  it('refuses two tools with one name, and the deprecated functions form', () => {
    refused(() => toChatOptions(request({ tools: [weather, weather] })), 'tools[1].function.name');
    refused(() => toChatOptions(request({ functions: [weather.function] })), 'functions');
  });

  it('refuses bad tool and format shapes at the schema', () => {
    for (const extra of [
      { tools: [{ type: 'custom', custom: { name: 'x' } }] },
      { tools: [{ type: 'function', function: { name: 'has space' } }] },
      { tool_choice: 'sometimes' },
      { response_format: { type: 'yaml' } },
      { response_format: { type: 'json_schema', json_schema: { schema: {} } } },
    ]) {
      assert.equal(chatCompletionRequestSchema.safeParse({ model: 'm', messages: [{ role: 'user', content: 'x' }], ...extra }).success, false, JSON.stringify(extra));
    }
  });

  it('carries assistant tool calls and tool results, and refuses a result that answers no call', () => {
    const call = { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } };
    const messages = toChatMessages(request({
      messages: [
        { role: 'user', content: 'weather?' },
        { role: 'assistant', content: null, tool_calls: [call] },
        { role: 'tool', tool_call_id: 'call_1', content: '{"c":3}' },
      ],
    }).messages);
    assert.deepEqual(messages[1], { role: 'assistant', content: '', toolCalls: [{ id: 'call_1', name: 'get_weather', arguments: '{"city":"Oslo"}' }] });
    assert.deepEqual(messages[2], { role: 'tool', content: '{"c":3}', toolCallId: 'call_1' });
    refused(() => toChatMessages(request({ messages: [{ role: 'tool', tool_call_id: 'call_9', content: 'x' }] }).messages), 'messages[0].tool_call_id');
    refused(() => toChatMessages(request({ messages: [{ role: 'tool', content: 'x' }] }).messages), 'messages[0].tool_call_id');
  });
});
