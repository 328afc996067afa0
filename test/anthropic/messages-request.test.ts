import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ApiError } from '../../src/shared/api-error.ts';
import { toEngineMessages, toToolOptions, toolUseId } from '../../src/anthropic/messages-request.ts';
import { anthropicStop } from '../../src/anthropic/messages-reply.ts';
import { MessagesStream } from '../../src/anthropic/messages-stream.ts';
import type { SseEvents } from '../../src/openai/stream-shape.ts';
import type { GenerateResult } from '../../src/inference/language-model.ts';

type Messages = Parameters<typeof toEngineMessages>[0]['messages'];

function refused(fn: () => unknown, message: RegExp): void {
  assert.throws(fn, (e: unknown) => e instanceof ApiError && e.status === 400 && message.test(e.message));
}

describe('toEngineMessages', () => {
  test('system blocks joined; consecutive turns of one role combined; thinking dropped; tool results become tool turns before the text', () => {
    const messages: Messages = [
      { role: 'user', content: 'a' },
      { role: 'user', content: [{ type: 'text', text: 'b' }] },
      { role: 'assistant', content: [{ type: 'thinking', thinking: 'hmm', signature: 's' }, { type: 'text', text: 'c' }, { type: 'tool_use', id: 'toolu_1', name: 'f', input: { x: 1 } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: 'boom' }], is_error: true }, { type: 'text', text: 'd' }] },
    ];
    assert.deepEqual(toEngineMessages({ system: [{ type: 'text', text: 'S1' }, { type: 'text', text: 'S2' }], messages }), [
      { role: 'system', content: 'S1\nS2' },
      { role: 'user', content: 'a\nb' },
      { role: 'assistant', content: 'c', toolCalls: [{ id: 'toolu_1', name: 'f', arguments: '{"x":1}' }] },
      { role: 'tool', content: 'Error: boom', toolCallId: 'toolu_1' },
      { role: 'user', content: 'd' },
    ]);
  });

  test('refuses prefill, stray tool results, unanswered and duplicate tool_use ids, and non-text blocks, naming where', () => {
    refused(() => toEngineMessages({ messages: [{ role: 'user', content: 'a' }, { role: 'assistant', content: 'b' }] }), /prefill/);
    refused(() => toEngineMessages({ messages: [{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 't' }] }] }), /unexpected tool_use_id "t"/);
    const use = (id: string) => ({ type: 'tool_use', id, name: 'f', input: {} });
    refused(() => toEngineMessages({ messages: [{ role: 'user', content: 'a' }, { role: 'assistant', content: [use('t')] }, { role: 'user', content: 'b' }] }), /^messages\[2\]: tool_use ids .*"t"/);
    refused(() => toEngineMessages({ messages: [{ role: 'user', content: 'a' }, { role: 'assistant', content: [use('t'), use('t')] }, { role: 'user', content: 'b' }] }), /used twice/);
    refused(() => toEngineMessages({ messages: [{ role: 'user', content: [{ type: 'document', source: {} }] }] }), /messages\[0\]\.content\[0\] is a "document" block.*text only/);
    refused(() => toEngineMessages({ messages: [{ role: 'user', content: [use('t')] }] }), /"tool_use" block in a user message/);
  });
});

describe('toToolOptions', () => {
  const tool = (name: string) => ({ name, input_schema: { type: 'object' } });
  test('any → required, tool → the named function, disable_parallel_tool_use → one call', () => {
    assert.deepEqual(toToolOptions({ tools: [tool('f')], tool_choice: { type: 'any', disable_parallel_tool_use: true } }).toolChoice, { type: 'required' });
    assert.equal(toToolOptions({ tools: [tool('f')], tool_choice: { type: 'any', disable_parallel_tool_use: true } }).parallelToolCalls, false);
    assert.deepEqual(toToolOptions({ tools: [tool('f')], tool_choice: { type: 'tool', name: 'f' } }).toolChoice, { type: 'function', name: 'f' });
    assert.deepEqual(toToolOptions({ tools: [tool('f')], tool_choice: { type: 'none' } }).toolChoice, { type: 'none' });
  });
  test('refuses server tools, duplicate names, a named tool not listed, and any without tools', () => {
    refused(() => toToolOptions({ tools: [{ type: 'web_search_20250305', name: 'web_search' }] }), /server tool "web_search_20250305"/);
    refused(() => toToolOptions({ tools: [tool('f'), tool('f')] }), /two tools are named "f"/);
    refused(() => toToolOptions({ tools: [tool('f')], tool_choice: { type: 'tool', name: 'g' } }), /"g", which is not in tools/);
    refused(() => toToolOptions({ tools: [], tool_choice: { type: 'any' } }), /needs at least one tool/);
    refused(() => toToolOptions({ tools: [{ name: 'f' }] }), /input_schema/);
  });
  test('tool-use ids: the engines call_ ids become toolu_ ids', () => {
    assert.equal(toolUseId('call_abc'), 'toolu_abc');
    assert.equal(toolUseId('xyz'), 'xyz');
  });
});

const result = (over: Partial<GenerateResult>): GenerateResult => ({ text: '', toolCalls: [], finishReason: 'stop', usage: { promptTokens: 3, completionTokens: 5 }, ...over });

describe('stop reasons', () => {
  test('length is max_tokens when all were used, else the context ran out; calls end in tool_use; a named stop is stop_sequence', () => {
    assert.equal(anthropicStop(result({ finishReason: 'length' }), 5).stop_reason, 'max_tokens');
    assert.equal(anthropicStop(result({ finishReason: 'length' }), 50).stop_reason, 'model_context_window_exceeded');
    assert.equal(anthropicStop(result({ toolCalls: [{ id: 'c', name: 'f', arguments: '{}' }] }), 50).stop_reason, 'tool_use');
    assert.deepEqual(anthropicStop(result({ stopSequence: '##' }), 50), { stop_reason: 'stop_sequence', stop_sequence: '##' });
    assert.deepEqual(anthropicStop(result({}), 50), { stop_reason: 'end_turn', stop_sequence: null });
  });
});

describe('MessagesStream', () => {
  test('blocks open and close in order: text, then a tool_use with its input_json_delta, then text again in a new block', () => {
    const stream = new MessagesStream('msg_1', 'm', 50);
    const names = (events: SseEvents) => events.events.map((e) => `${e.event}${(e.data as { index?: number }).index !== undefined ? `#${(e.data as { index: number }).index}` : ''}`);
    const seen = [
      ...names(stream.start()),
      ...names(stream.part(0, { type: 'text-delta', text: 'hi' })),
      ...names(stream.part(0, { type: 'tool-call-start', index: 0, id: 'call_1', name: 'f' })),
      ...names(stream.part(0, { type: 'tool-call-delta', index: 0, argumentsDelta: '{}' })),
      ...names(stream.part(0, { type: 'text-delta', text: 'after' })),
      ...names(stream.finish()),
    ];
    stream.settle(result({ toolCalls: [{ id: 'call_1', name: 'f', arguments: '{}' }] }));
    seen.push(...names(stream.usage()));
    assert.deepEqual(seen, [
      'message_start', 'ping',
      'content_block_start#0', 'content_block_delta#0',
      'content_block_stop#0', 'content_block_start#1', 'content_block_delta#1',
      'content_block_stop#1', 'content_block_start#2', 'content_block_delta#2',
      'content_block_stop#2',
      'message_delta', 'message_stop',
    ]);
  });
});
