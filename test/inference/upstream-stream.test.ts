/**
 * Stream normalization against a real HTTP server speaking SSE the way real upstreams do —
 * quirks included — through the same client svc uses. Each case sends one scripted stream.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { GenerateResult, GenerationPart } from '../../src/inference/language-model.ts';
import type { OpenAIUpstream } from '../../src/inference/openai-upstream.ts';
import { normalizeFinishReason } from '../../src/inference/upstream-stream.ts';
import { ApiError } from '../../src/shared/api-error.ts';
import { answer, contentChunk, finishChunk, sse, startUpstreamClient, type Handler, type ScriptedUpstream } from '../helpers/scripted-upstream.ts';

let server: ScriptedUpstream;
let upstream: OpenAIUpstream;

before(async () => {
  ({ server, upstream } = await startUpstreamClient());
});
after(async () => {
  await upstream.close();
  await server.close();
});

async function run(handler: Handler, kind: 'chat' | 'completion' = 'chat'): Promise<{ result: GenerateResult; parts: GenerationPart[] }> {
  server.handle(handler);
  const parts: GenerationPart[] = [];
  const model = upstream.model('m', 'up/m');
  const options = { onPart: (p: GenerationPart) => parts.push(p) };
  const result = kind === 'chat' ? await model.chat([{ role: 'user', content: 'hi' }], options) : await model.complete('hi', options);
  return { result, parts };
}

async function runError(handler: Handler): Promise<ApiError> {
  try {
    await run(handler);
  } catch (error) {
    assert.ok(error instanceof ApiError, `expected an ApiError, got ${String(error)}`);
    return error;
  }
  assert.fail('expected the generation to fail');
}

const texts = (parts: GenerationPart[]) => parts.flatMap((p) => (p.type === 'text-delta' ? [p.text] : []));

describe('what svc asks for', () => {
  test('a streamed chat with usage, the upstream model id and only the fields the client set', async () => {
    await run(sse([contentChunk('a'), finishChunk('stop'), '[DONE]'].map((e) => (e === '[DONE]' ? 'data: [DONE]' : e))));
    const request = server.requests.at(-1)!;
    assert.equal(request.url, '/v1/chat/completions');
    assert.deepEqual(request.body, { model: 'm', messages: [{ role: 'user', content: 'hi' }], stream: true, stream_options: { include_usage: true } });
    assert.equal(request.headers.authorization, undefined);
  });
});

describe('normalization', () => {
  test('the plain OpenAI stream: text parts in order, finish reason, usage from the last chunk', async () => {
    const { result, parts } = await run(sse([
      { ...contentChunk(''), choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] },
      contentChunk('Hel'), contentChunk('lo'), finishChunk('stop'),
      { id: 'x', object: 'chat.completion.chunk', choices: [], usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 } },
      'data: [DONE]',
    ]));
    assert.deepEqual(texts(parts), ['Hel', 'lo']);
    assert.deepEqual(result, { text: 'Hello', toolCalls: [], finishReason: 'stop', usage: { promptTokens: 3, completionTokens: 2 } });
  });

  test('choices: null (and missing) are no choices, not a crash', async () => {
    const { result } = await run(sse([
      { choices: null, usage: null }, { object: 'chat.completion.chunk' }, contentChunk('x'), finishChunk('stop'),
      { choices: null, usage: { prompt_tokens: 1, completion_tokens: 1 } }, 'data: [DONE]',
    ]));
    assert.equal(result.text, 'x');
    assert.deepEqual(result.usage, { promptTokens: 1, completionTokens: 1 });
  });

  test('a choice without index is choice 0; other choices are ignored', async () => {
    const { result } = await run(sse([
      { choices: [{ delta: { content: 'a' } }] },
      { choices: [{ index: 1, delta: { content: 'OTHER' } }] },
      { choices: [{ delta: {}, finish_reason: 'length' }] }, 'data: [DONE]',
    ]));
    assert.equal(result.text, 'a');
    assert.equal(result.finishReason, 'length');
  });

  test('usage first, usage in every chunk (the last wins), usage beside the finish reason', async () => {
    const first = await run(sse([{ choices: [], usage: { prompt_tokens: 9, completion_tokens: 0 } }, contentChunk('a'), finishChunk('stop'), 'data: [DONE]']));
    assert.deepEqual(first.result.usage, { promptTokens: 9, completionTokens: 0 });
    const every = await run(sse([
      contentChunk('a', { usage: { prompt_tokens: 4, completion_tokens: 1 } }),
      contentChunk('b', { usage: { prompt_tokens: 4, completion_tokens: 2 } }),
      finishChunk('stop', { usage: { prompt_tokens: 4, completion_tokens: 3 } }), 'data: [DONE]',
    ]));
    assert.deepEqual(every.result.usage, { promptTokens: 4, completionTokens: 3 });
  });

  test('no usage at all reports zeros rather than failing', async () => {
    const { result } = await run(sse([contentChunk('a'), finishChunk('stop'), 'data: [DONE]']));
    assert.deepEqual(result.usage, { promptTokens: 0, completionTokens: 0 });
  });

  test('a stream that ends after its finish reason without [DONE] is complete', async () => {
    const { result } = await run(sse([contentChunk('a'), finishChunk('stop')]));
    assert.equal(result.finishReason, 'stop');
    assert.equal(result.text, 'a');
  });

  test('[DONE] without a finish reason is a stop', async () => {
    const { result } = await run(sse([contentChunk('a'), 'data: [DONE]']));
    assert.equal(result.finishReason, 'stop');
  });

  test('a stream that ends with neither a finish reason nor [DONE] was cut off: 502', async () => {
    const error = await runError(sse([contentChunk('a')]));
    assert.equal(error.status, 502);
    assert.equal(error.code, 'upstream_invalid_response');
  });

  test('CRLF line endings, comments and an event split into single bytes', async () => {
    const crlf = await run(sse([': keep-alive', contentChunk('a'), finishChunk('stop'), 'data: [DONE]'], { lineEnding: '\r\n' }));
    assert.equal(crlf.result.text, 'a');
    const bytes = await run((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const body = `data: ${JSON.stringify(contentChunk('é✓'))}\n\ndata: ${JSON.stringify(finishChunk('stop'))}\n\ndata: [DONE]\n\n`;
      const buffer = Buffer.from(body);
      let i = 0;
      const next = () => {
        if (i >= buffer.length) return void res.end();
        res.write(buffer.subarray(i, i + 1));
        i++;
        setImmediate(next);
      };
      next();
    });
    assert.equal(bytes.result.text, 'é✓');
  });

  test('finish reasons of other dialects map to OpenAI\'s', () => {
    assert.equal(normalizeFinishReason('eos'), 'stop');
    assert.equal(normalizeFinishReason('max_tokens'), 'length');
    assert.equal(normalizeFinishReason('function_call'), 'tool_calls');
    assert.equal(normalizeFinishReason('something_new'), 'stop');
  });

  test('legacy completion chunks carry text in choices[].text', async () => {
    const { result, parts } = await run(sse([
      { object: 'text_completion', choices: [{ index: 0, text: 'foo', finish_reason: null }] },
      { object: 'text_completion', choices: [{ text: 'bar', finish_reason: 'length' }] },
      { choices: [], usage: { prompt_tokens: 1, completion_tokens: 2 } }, 'data: [DONE]',
    ]), 'completion');
    assert.deepEqual(texts(parts), ['foo', 'bar']);
    assert.deepEqual(result, { text: 'foobar', toolCalls: [], finishReason: 'length', usage: { promptTokens: 1, completionTokens: 2 } });
    assert.equal(server.requests.at(-1)!.url, '/v1/completions');
  });

  test('an upstream that ignores stream: true and answers whole is read the same', async () => {
    const { result, parts } = await run(answer(200, {
      object: 'chat.completion',
      choices: [{ index: 0, message: { role: 'assistant', content: 'whole', tool_calls: [
        { id: 'c1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } },
        { id: 'c2', type: 'function', function: { name: 'g', arguments: '{}' } },
      ] }, finish_reason: 'tool_calls' }],
      usage: { prompt_tokens: 2, completion_tokens: 3 },
    }));
    assert.deepEqual(texts(parts), ['whole']);
    assert.deepEqual(result.toolCalls, [{ id: 'c1', name: 'f', arguments: '{"a":1}' }, { id: 'c2', name: 'g', arguments: '{}' }]);
    assert.equal(result.finishReason, 'tool_calls');
  });
});

describe('tool calls', () => {
  test('OpenAI\'s form: a start with id and name, argument deltas by index, two calls in parallel', async () => {
    const call = (index: number, fields: object) => ({ choices: [{ index: 0, delta: { tool_calls: [{ index, ...fields }] }, finish_reason: null }] });
    const { result, parts } = await run(sse([
      call(0, { id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '' } }),
      call(0, { function: { arguments: '{"city":' } }),
      call(1, { id: 'call_b', type: 'function', function: { name: 'get_time', arguments: '{}' } }),
      call(0, { function: { arguments: '"Oslo"}' } }),
      finishChunk('tool_calls'), 'data: [DONE]',
    ]));
    assert.deepEqual(parts, [
      { type: 'tool-call-start', index: 0, id: 'call_a', name: 'get_weather' },
      { type: 'tool-call-delta', index: 0, argumentsDelta: '{"city":' },
      { type: 'tool-call-start', index: 1, id: 'call_b', name: 'get_time' },
      { type: 'tool-call-delta', index: 1, argumentsDelta: '{}' },
      { type: 'tool-call-delta', index: 0, argumentsDelta: '"Oslo"}' },
    ]);
    assert.deepEqual(result.toolCalls, [
      { id: 'call_a', name: 'get_weather', arguments: '{"city":"Oslo"}' },
      { id: 'call_b', name: 'get_time', arguments: '{}' },
    ]);
    assert.equal(result.finishReason, 'tool_calls');
  });

  test('Ollama\'s form: whole calls without index, arguments as an object, finish "stop" → tool_calls', async () => {
    const { result, parts } = await run(sse([
      { choices: [{ index: 0, delta: { tool_calls: [{ id: 'call_1', function: { name: 'f', arguments: { x: 1 } } }] } }] },
      { choices: [{ index: 0, delta: { tool_calls: [{ id: 'call_2', function: { name: 'g', arguments: '{"y":2}' } }] } }] },
      finishChunk('stop'), 'data: [DONE]',
    ]));
    assert.deepEqual(result.toolCalls, [{ id: 'call_1', name: 'f', arguments: '{"x":1}' }, { id: 'call_2', name: 'g', arguments: '{"y":2}' }]);
    assert.equal(result.finishReason, 'tool_calls');
    assert.deepEqual(parts.filter((p) => p.type === 'tool-call-start').map((p) => p.index), [0, 1]);
  });

  test('servers that number every call 0 start a new call on a new id; a missing id is made up', async () => {
    const { result } = await run(sse([
      { choices: [{ delta: { tool_calls: [{ index: 0, id: 'a', function: { name: 'f', arguments: '{}' } }] } }] },
      { choices: [{ delta: { tool_calls: [{ index: 0, id: 'b', function: { name: 'g', arguments: '{}' } }] } }] },
      { choices: [{ delta: { tool_calls: [{ index: 5, function: { name: 'h', arguments: '{}' } }] } }] },
      finishChunk('tool_calls'), 'data: [DONE]',
    ]));
    assert.deepEqual(result.toolCalls.map((c) => c.name), ['f', 'g', 'h']);
    assert.deepEqual(result.toolCalls.slice(0, 2).map((c) => c.id), ['a', 'b']);
    assert.match(result.toolCalls[2]!.id, /^call_/);
  });

  test('arguments that arrive before the name are sent right after the start', async () => {
    const { parts } = await run(sse([
      { choices: [{ delta: { tool_calls: [{ index: 0, id: 'a', function: { arguments: '{"q"' } }] } }] },
      { choices: [{ delta: { tool_calls: [{ index: 0, function: { name: 'search', arguments: ':1}' } }] } }] },
      finishChunk('tool_calls'), 'data: [DONE]',
    ]));
    assert.deepEqual(parts, [
      { type: 'tool-call-start', index: 0, id: 'a', name: 'search' },
      { type: 'tool-call-delta', index: 0, argumentsDelta: '{"q"' },
      { type: 'tool-call-delta', index: 0, argumentsDelta: ':1}' },
    ]);
  });
});

describe('bad streams are errors, never crashes', () => {
  test('an event that is not JSON', async () => {
    const error = await runError(sse([contentChunk('a'), 'data: {"choices": [', finishChunk('stop')]));
    assert.equal(error.status, 502);
    assert.equal(error.code, 'upstream_invalid_response');
    assert.match(error.message, /Upstream 'up'/);
  });

  test('a chunk of the wrong shape', async () => {
    const error = await runError(sse([{ choices: 'nope' }]));
    assert.equal(error.code, 'upstream_invalid_response');
    assert.match(error.message, /choices/);
    const negative = await runError(sse([{ choices: [{ index: -1, delta: { content: 'x' } }] }]));
    assert.equal(negative.code, 'upstream_invalid_response');
  });

  test('an error object mid-stream (OpenAI and svc send this) and an SSE error event', async () => {
    const error = await runError(sse([contentChunk('a'), { error: { message: 'the model crashed', type: 'server_error', code: 'x' } }, 'data: [DONE]']));
    assert.equal(error.status, 502);
    assert.equal(error.code, 'upstream_error');
    assert.match(error.message, /the model crashed/);
    const event = await runError(sse([contentChunk('a'), `event: error\ndata: ${JSON.stringify({ message: 'overloaded' })}`]));
    assert.match(event.message, /overloaded/);
    const vllm = await runError(sse([{ object: 'error', message: 'bad things', code: 500 }]));
    assert.match(vllm.message, /bad things/);
  });
});
