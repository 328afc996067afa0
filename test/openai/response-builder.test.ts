/**
 * The Responses API object and event sequence for generations the fixture model cannot make on
 * demand: text followed by calls, several calls, an empty reply.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { GenerationPart } from '../../src/inference/language-model.ts';
import { SseEvents, type StreamShape } from '../../src/openai/stream-shape.ts';
import { ResponseBuilder, type ResponseSettings } from '../../src/openai/response-builder.ts';

const settings: ResponseSettings = {
  previousResponseId: null, store: false,
  model: 'm', instructions: null, maxOutputTokens: null, temperature: 1, topP: 1, presencePenalty: 0, frequencyPenalty: 0,
  topLogprobs: 0, parallelToolCalls: true, toolChoice: 'auto', tools: [], text: { format: { type: 'text' } }, truncation: 'disabled',
  serviceTier: 'default', safetyIdentifier: null, promptCacheKey: null, metadata: {}, user: null,
};
const usage = { prompt_tokens: 5, completion_tokens: 7, total_tokens: 12 };

function events(value: unknown): { event: string; data: Record<string, unknown> }[] {
  assert.ok(value instanceof SseEvents);
  return value.events as { event: string; data: Record<string, unknown> }[];
}

/** Runs a generation's parts through the stream shape the way runGeneration calls it. */
function stream(parts: GenerationPart[], reason: 'stop' | 'length' | 'tool_calls'): { event: string; data: Record<string, unknown> }[] {
  const shape: StreamShape = new ResponseBuilder(settings).streamShape();
  assert.equal(shape.doneSentinel, false);
  return [
    ...events(shape.start!(0)),
    ...parts.flatMap((p) => events(shape.part(0, p))),
    ...events(shape.finish(0, reason)),
    ...events(shape.usage(usage)),
  ];
}

describe('ResponseBuilder', () => {
  it('streams text then two calls as three items, each opened and closed in order', () => {
    const all = stream([
      { type: 'text-delta', text: 'Let me check.' },
      { type: 'tool-call-start', index: 0, id: 'call_a', name: 'f' },
      { type: 'tool-call-delta', index: 0, argumentsDelta: '{"x":' },
      { type: 'tool-call-delta', index: 0, argumentsDelta: '1}' },
      { type: 'tool-call-start', index: 1, id: 'call_b', name: 'g' },
      { type: 'tool-call-delta', index: 1, argumentsDelta: '{}' },
    ], 'tool_calls');
    assert.deepEqual(all.map((e) => e.event), [
      'response.created', 'response.in_progress',
      'response.output_item.added', 'response.content_part.added', 'response.output_text.delta',
      'response.output_text.done', 'response.content_part.done', 'response.output_item.done',
      'response.output_item.added', 'response.function_call_arguments.delta', 'response.function_call_arguments.delta',
      'response.function_call_arguments.done', 'response.output_item.done',
      'response.output_item.added', 'response.function_call_arguments.delta',
      'response.function_call_arguments.done', 'response.output_item.done',
      'response.completed',
    ]);
    assert.deepEqual(all.map((e) => e.data.sequence_number), all.map((_e, i) => i));
    assert.deepEqual(all.map((e) => e.data.type), all.map((e) => e.event));
    const done = all.filter((e) => e.event === 'response.function_call_arguments.done').map((e) => [e.data.name, e.data.arguments, e.data.output_index]);
    assert.deepEqual(done, [['f', '{"x":1}', 1], ['g', '{}', 2]]);
    const completed = all.at(-1)!.data.response as { status: string; output: { type: string; call_id?: string; status: string }[]; usage: Record<string, unknown> };
    assert.equal(completed.status, 'completed');
    assert.deepEqual(completed.output.map((o) => [o.type, o.call_id, o.status]), [['message', undefined, 'completed'], ['function_call', 'call_a', 'completed'], ['function_call', 'call_b', 'completed']]);
    assert.deepEqual(completed.usage, { input_tokens: 5, input_tokens_details: { cached_tokens: 0 }, output_tokens: 7, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 12 });
  });

  it('an empty reply still has its (empty) message; max_output_tokens makes it incomplete', () => {
    const all = stream([], 'length');
    assert.deepEqual(all.map((e) => e.event).slice(2), [
      'response.output_item.added', 'response.content_part.added', 'response.output_text.done',
      'response.content_part.done', 'response.output_item.done', 'response.incomplete',
    ]);
    const response = all.at(-1)!.data.response as { status: string; incomplete_details: unknown; output: { status: string }[] };
    assert.equal(response.status, 'incomplete');
    assert.deepEqual(response.incomplete_details, { reason: 'max_output_tokens' });
    assert.equal(response.output[0]!.status, 'incomplete');
  });

  it('the whole response has the same items as the stream', () => {
    const builder = new ResponseBuilder(settings);
    const response = builder.complete({
      text: '', toolCalls: [{ id: 'call_a', name: 'f', arguments: '{}' }], finishReason: 'tool_calls', usage: { promptTokens: 5, completionTokens: 7 },
    }, usage) as { id: string; output: { type: string; id: string }[]; status: string };
    assert.match(response.id, /^resp_/);
    assert.equal(response.status, 'completed');
    assert.deepEqual(response.output.map((o) => o.type), ['function_call'], 'no empty message beside a call');
    assert.match(response.output[0]!.id, /^fc_/);
  });
});
