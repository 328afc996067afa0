/**
 * The upstream client against scripted servers on loopback: how every kind of upstream
 * failure maps to our envelope, what is sent (key, headers, never the client's key), that an
 * abort reaches the upstream, embeddings and model discovery.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { OpenAIUpstream, type UpstreamOptions } from '../../src/inference/openai-upstream.ts';
import { retryAfterSeconds, scrubSecrets } from '../../src/inference/upstream-errors.ts';
import { UpstreamRegistry } from '../../src/inference/upstream-registry.ts';
import { MergedModelRegistry } from '../../src/inference/merged-model-registry.ts';
import type { LanguageModel, ModelDescriptor, ModelRegistry } from '../../src/inference/language-model.ts';
import { ApiError } from '../../src/shared/api-error.ts';
import { Secret } from '../../src/shared/secret.ts';
import { answer, contentChunk, finishChunk, sse, startScriptedUpstream, type ScriptedUpstream } from '../helpers/scripted-upstream.ts';

const KEY = 'sk-test-0123456789abcdefSECRET';
let server: ScriptedUpstream;
const upstreams: OpenAIUpstream[] = [];

function make(options: Partial<UpstreamOptions> = {}): OpenAIUpstream {
  const upstream = new OpenAIUpstream({
    name: 'up', baseUrl: server.baseUrl, kind: 'local', connectTimeoutMs: 2000, firstByteTimeoutMs: 2000,
    apiKey: new Secret(KEY), apiKeyEnv: 'UP_KEY', ...options,
  });
  upstreams.push(upstream);
  return upstream;
}

before(async () => {
  server = await startScriptedUpstream();
});
after(async () => {
  await Promise.all(upstreams.map((u) => u.close()));
  await server.close();
});

async function chatError(upstream: OpenAIUpstream): Promise<ApiError> {
  try {
    await upstream.model('m', 'up/m').chat([{ role: 'user', content: 'hi' }], {});
  } catch (error) {
    assert.ok(error instanceof ApiError, `expected an ApiError, got ${String(error)}`);
    return error;
  }
  assert.fail('expected an error');
}

describe('requests', () => {
  test('the key goes to the upstream as a bearer token, configured headers beside it', async () => {
    const upstream = make({ headers: { 'x-org': 'acme' } });
    server.handle(sse([contentChunk('a'), finishChunk('stop'), 'data: [DONE]']));
    await upstream.model('m', 'up/m').chat([{ role: 'user', content: 'hi' }], {});
    const request = server.requests.at(-1)!;
    assert.equal(request.headers.authorization, `Bearer ${KEY}`);
    assert.equal(request.headers['x-org'], 'acme');
  });

  test('sampling, tools, tool_choice and response_format pass through in OpenAI\'s form', async () => {
    const upstream = make();
    // The forced call, as the request asks (svc checks what a structured request gets back).
    const call = { choices: [{ index: 0, delta: { tool_calls: [{ index: 0, id: 'c2', function: { name: 'w', arguments: '{}' } }] } }] };
    server.handle(sse([call, finishChunk('tool_calls'), 'data: [DONE]']));
    await upstream.model('m', 'up/m').chat([
      { role: 'user', content: 'weather?' },
      { role: 'assistant', content: '', toolCalls: [{ id: 'c1', name: 'w', arguments: '{}' }] },
      { role: 'tool', content: 'sunny', toolCallId: 'c1' },
    ], {
      maxTokens: 7, temperature: 0, topP: 0.5, seed: 3, stop: ['x'], frequencyPenalty: 0.1, presencePenalty: 0.2,
      tools: [{ name: 'w', description: 'weather', parameters: { type: 'object' } }],
      toolChoice: { type: 'function', name: 'w' }, parallelToolCalls: false,
      responseFormat: { type: 'json_schema', name: 's', schema: { type: 'object' }, strict: true },
    });
    assert.deepEqual(server.requests.at(-1)!.body, {
      model: 'm',
      messages: [
        { role: 'user', content: 'weather?' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'w', arguments: '{}' } }] },
        { role: 'tool', content: 'sunny', tool_call_id: 'c1' },
      ],
      max_tokens: 7, temperature: 0, top_p: 0.5, seed: 3, stop: ['x'], frequency_penalty: 0.1, presence_penalty: 0.2,
      tools: [{ type: 'function', function: { name: 'w', description: 'weather', parameters: { type: 'object' } } }],
      tool_choice: { type: 'function', function: { name: 'w' } }, parallel_tool_calls: false,
      response_format: { type: 'json_schema', json_schema: { name: 's', schema: { type: 'object' }, strict: true } },
      stream: true, stream_options: { include_usage: true },
    });
  });

  test('an abort stops the upstream request at once and returns what arrived', async () => {
    const upstream = make();
    let request: { aborted: Promise<void> } | undefined;
    server.handle((req, res) => {
      request = req;
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`data: ${JSON.stringify(contentChunk('first'))}\n\n`);
      // …and never more: only the abort ends this.
    });
    const controller = new AbortController();
    const result = await upstream.model('m', 'up/m').chat([{ role: 'user', content: 'hi' }], {
      signal: controller.signal,
      onPart: () => controller.abort(),
    });
    assert.equal(result.finishReason, 'abort');
    assert.equal(result.text, 'first');
    await request!.aborted;
    assert.equal(upstream.active, 0);
  });
});

describe('upstream errors in our envelope', () => {
  test('400/404/413/422 keep their status, the upstream\'s message, code and param', async () => {
    const upstream = make();
    server.handle(answer(400, { error: { message: 'temperature is too high', type: 'invalid_request_error', param: 'temperature', code: 'invalid_value' } }));
    const bad = await chatError(upstream);
    assert.equal(bad.status, 400);
    assert.equal(bad.type, 'invalid_request_error');
    assert.equal(bad.code, 'invalid_value');
    assert.equal(bad.param, 'temperature');
    assert.match(bad.message, /^Upstream 'up': temperature is too high/);
    for (const status of [404, 413, 422]) {
      server.handle(answer(status, { error: { message: `status ${status}` } }));
      const error = await chatError(upstream);
      assert.equal(error.status, status);
      assert.match(error.message, new RegExp(`status ${status}`));
    }
  });

  test('Ollama\'s string errors, vLLM\'s flat errors and FastAPI\'s detail are all read', async () => {
    const upstream = make();
    server.handle(answer(404, { error: "model 'm' not found, try pulling it first" }));
    assert.match((await chatError(upstream)).message, /try pulling it first/);
    server.handle(answer(400, { object: 'error', message: 'max_tokens is too large', type: 'BadRequestError', code: 400 }));
    assert.match((await chatError(upstream)).message, /max_tokens is too large/);
    server.handle(answer(422, { detail: [{ loc: ['body', 'messages'], msg: 'field required' }] }));
    assert.match((await chatError(upstream)).message, /field required/);
    server.handle(answer(400, 'plain text problem'));
    assert.match((await chatError(upstream)).message, /plain text problem/);
  });

  test('429 and 503 keep Retry-After', async () => {
    const upstream = make();
    server.handle(answer(429, { error: { message: 'slow down' } }, { 'retry-after': '7' }));
    const limited = await chatError(upstream);
    assert.equal(limited.status, 429);
    assert.equal(limited.type, 'rate_limit_error');
    assert.equal(limited.retryAfterSeconds, 7);
    server.handle(answer(503, { error: { message: 'busy', code: 'model_overloaded' } }, { 'retry-after': '2' }));
    const busy = await chatError(upstream);
    assert.equal(busy.status, 503);
    assert.equal(busy.code, 'model_overloaded');
    assert.equal(busy.retryAfterSeconds, 2);
  });

  test('401/403 are svc\'s key, not the client\'s: 502 naming the upstream and the variable, never the key', async () => {
    const upstream = make();
    for (const status of [401, 403]) {
      server.handle(answer(status, { error: { message: `Incorrect API key provided: ${KEY}` } }));
      const error = await chatError(upstream);
      assert.equal(error.status, 502);
      assert.equal(error.code, 'upstream_auth_failed');
      assert.match(error.message, /Upstream 'up'/);
      assert.match(error.message, /UP_KEY/);
      assert.ok(!error.message.includes(KEY));
    }
  });

  test('an upstream that echoes the key in another error gets it redacted', async () => {
    const upstream = make();
    server.handle(answer(400, { error: { message: `bad header ${KEY} here` } }));
    const error = await chatError(upstream);
    assert.ok(!error.message.includes(KEY));
    assert.match(error.message, /\[redacted\]/);
  });

  test('5xx and other statuses are 502 upstream_error; 504 is upstream_timeout', async () => {
    const upstream = make();
    server.handle(answer(500, { error: { message: 'boom' } }));
    const error = await chatError(upstream);
    assert.equal(error.status, 502);
    assert.equal(error.code, 'upstream_error');
    server.handle(answer(302, '', { location: 'http://example.com/' }));
    assert.equal((await chatError(upstream)).status, 502);
    server.handle(answer(504, { error: { message: 'gateway timeout' } }));
    assert.equal((await chatError(upstream)).code, 'upstream_timeout');
  });

  test('connection refused: 502 upstream_unavailable, and the upstream is marked unreachable', async () => {
    const closed: Server = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as { port: number }).port;
    await new Promise((resolve) => closed.close(resolve));
    const upstream = make({ baseUrl: `http://127.0.0.1:${port}/v1` });
    const error = await chatError(upstream);
    assert.equal(error.status, 502);
    assert.equal(error.code, 'upstream_unavailable');
    assert.match(error.message, /ECONNREFUSED/);
    assert.equal(upstream.reachable, false);
  });

  test('no answer within first_byte: 504 upstream_timeout; nor a first chunk after the headers', async () => {
    const upstream = make({ firstByteTimeoutMs: 300 });
    server.handle(() => {});
    const silent = await chatError(upstream);
    assert.equal(silent.status, 504);
    assert.equal(silent.code, 'upstream_timeout');
    server.handle((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.flushHeaders();
    });
    assert.equal((await chatError(upstream)).code, 'upstream_timeout');
  });

  test('finished, then silent without [DONE]: complete, not a timeout', async () => {
    const upstream = make({ firstByteTimeoutMs: 300 });
    server.handle(sse([contentChunk('a'), finishChunk('length')], { end: false }));
    const result = await upstream.model('m', 'up/m').chat([{ role: 'user', content: 'hi' }], {});
    assert.equal(result.finishReason, 'length');
  });

  test('a connection that breaks mid-stream: 502 upstream_unavailable', async () => {
    const upstream = make();
    server.handle((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`data: ${JSON.stringify(contentChunk('a'))}\n\n`, () => res.destroy());
    });
    const error = await chatError(upstream);
    assert.equal(error.status, 502);
    assert.equal(error.code, 'upstream_unavailable');
  });

  test('Retry-After in both of its forms', () => {
    assert.equal(retryAfterSeconds('12'), 12);
    assert.equal(retryAfterSeconds(new Date(Date.UTC(2030, 0, 1, 0, 0, 30)).toUTCString(), Date.UTC(2030, 0, 1)), 30);
    assert.equal(retryAfterSeconds('soon'), undefined);
    assert.equal(scrubSecrets('a KEY b KEY', ['KEY']), 'a [redacted] b [redacted]');
  });
});

describe('embeddings and models', () => {
  test('vectors in input order (whatever order they came in), base64 decoded, usage kept', async () => {
    const upstream = make();
    const b64 = Buffer.from(Float32Array.from([0.5, -1]).buffer).toString('base64');
    server.handle(answer(200, { object: 'list', data: [{ index: 1, embedding: b64 }, { index: 0, embedding: [1, 2] }], usage: { prompt_tokens: 4 } }));
    const result = await upstream.embed('m', ['a', 'b']);
    assert.deepEqual(result, { vectors: [[1, 2], [0.5, -1]], promptTokens: 4 });
    assert.deepEqual(server.requests.at(-1)!.body, { model: 'm', input: ['a', 'b'], encoding_format: 'float' });
  });

  test('the wrong number of vectors is an invalid response', async () => {
    const upstream = make();
    server.handle(answer(200, { data: [{ index: 0, embedding: [1] }] }));
    await assert.rejects(upstream.embed('m', ['a', 'b']), (e: unknown) => e instanceof ApiError && e.code === 'upstream_invalid_response');
  });

  test('discovery lists the upstream\'s models as <name>/<id>; a configured list needs no request', async () => {
    server.handle(answer(200, { object: 'list', data: [{ id: 'llama3.2:3b', created: 100 }, { id: 'org/model' }] }));
    const log = { info: () => {}, warn: () => {}, debug: () => {} };
    const registry = new UpstreamRegistry([
      { name: 'ollama', baseUrl: server.baseUrl, kind: 'local', connectTimeoutMs: 1000, firstByteTimeoutMs: 1000, discover: true },
      { name: 'fixed', baseUrl: 'http://127.0.0.1:9/v1', kind: 'remote', connectTimeoutMs: 1000, firstByteTimeoutMs: 1000, discover: false, models: ['a'] },
    ], { log });
    try {
      const before = server.requests.length;
      await registry.start(2000);
      assert.equal(server.requests.length, before + 1);
      assert.equal(server.requests.at(-1)!.url, '/v1/models');
      assert.deepEqual(registry.list().map((m) => [m.id, m.ownedBy]), [['ollama/llama3.2:3b', 'ollama'], ['ollama/org/model', 'ollama'], ['fixed/a', 'fixed']]);
      assert.equal(registry.list()[0]!.created, 100);
      assert.equal(registry.model('ollama/org/model')?.id, 'ollama/org/model');
      assert.equal(registry.model('fixed/a')?.id, 'fixed/a');
      assert.equal(registry.model('fixed/b'), undefined, 'a configured list is the whole list');
      assert.equal(registry.model('ollama/just-pulled')?.id, 'ollama/just-pulled', 'a discovering upstream decides itself');
      assert.equal(registry.model('nobody/x'), undefined);
      assert.equal(registry.model('plain'), undefined);
      assert.deepEqual(registry.health().map((h) => [h.name, h.kind, h.reachable, h.models]), [['ollama', 'local', true, 2], ['fixed', 'remote', null, 1]]);
      assert.equal(registry.outboundConnections(), 0, 'no connection to the remote upstream was opened');
    } finally {
      await registry.close();
    }
  });

  test('a local id wins over an upstream id, and the clash is reported once', () => {
    const registry = (ids: string[], owner: string): ModelRegistry => ({
      list: (): ModelDescriptor[] => ids.map((id) => ({ id, created: 0, ownedBy: owner })),
      model: (id: string) => (ids.includes(id) ? ({ id: `${owner}:${id}` } as unknown as LanguageModel) : undefined),
    });
    const clashes: string[] = [];
    const merged = new MergedModelRegistry([registry(['a', 'x/b'], 'local'), registry(['x/b', 'x/c'], 'x')], (id) => clashes.push(id));
    assert.deepEqual(merged.list().map((m) => `${m.ownedBy}:${m.id}`), ['local:a', 'local:x/b', 'x:x/c']);
    merged.list();
    assert.deepEqual(clashes, ['x/b']);
    assert.equal(merged.model('x/b')?.id, 'local:x/b');
    assert.equal(merged.model('x/c')?.id, 'x:x/c');
  });
});
