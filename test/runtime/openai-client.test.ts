/**
 * End to end: the real daemon as a process, real llama.cpp on the tiny fixture, driven by the
 * official `openai` npm client exactly as users point it at http://127.0.0.1:11435/v1.
 */
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, before, describe, test } from 'node:test';
import OpenAI from 'openai';
import { startDaemonWithClient, type DaemonProcess } from '../helpers/daemon-process.ts';

let daemon: DaemonProcess;
let client: OpenAI;

before(async () => {
  ({ daemon, client } = await startDaemonWithClient());
});
after(async () => {
  assert.equal(await daemon.stop(), 0);
});

describe('models', () => {
  test('lists the configured model', async () => {
    const page = await client.models.list();
    const ids = page.data.map((m) => m.id);
    // The configured model, then the built-in embedder of knowledge spaces.
    assert.deepEqual(ids, ['tiny', 'svc-hashed-embed-v2']);
    assert.equal(page.data[0]!.object, 'model');
    assert.equal(typeof page.data[0]!.created, 'number');
  });

  test('retrieves one model and 404s an unknown id with model_not_found', async () => {
    const model = await client.models.retrieve('tiny');
    assert.equal(model.id, 'tiny');
    await assert.rejects(client.models.retrieve('nope'), (error: unknown) => {
      assert.ok(error instanceof OpenAI.NotFoundError);
      assert.equal(error.code, 'model_not_found');
      return true;
    });
  });
});

describe('chat completions', () => {
  test('answers in the OpenAI shape with usage, and honours max_tokens', async () => {
    const completion = await client.chat.completions.create({
      model: 'tiny',
      messages: [{ role: 'system', content: 'You are terse.' }, { role: 'user', content: 'Say hello.' }],
      max_tokens: 8,
      temperature: 0,
    });
    assert.match(completion.id, /^chatcmpl-/);
    assert.equal(completion.object, 'chat.completion');
    assert.equal(completion.model, 'tiny');
    assert.equal(completion.choices.length, 1);
    const choice = completion.choices[0]!;
    assert.equal(choice.message.role, 'assistant');
    assert.equal(typeof choice.message.content, 'string');
    assert.ok(choice.message.content!.length > 0);
    assert.equal(choice.finish_reason, 'length');
    assert.equal(completion.usage?.completion_tokens, 8);
    assert.ok(completion.usage!.prompt_tokens > 5);
    assert.equal(completion.usage!.total_tokens, completion.usage!.prompt_tokens + 8);
  });

  test('greedy decoding is reproducible and array-of-text-parts content equals the string', async () => {
    const ask = (content: OpenAI.Chat.ChatCompletionUserMessageParam['content']) =>
      client.chat.completions.create({ model: 'tiny', messages: [{ role: 'user', content }], max_tokens: 12, temperature: 0 });
    const a = await ask('hello world');
    const b = await ask([{ type: 'text', text: 'hello world' }]);
    assert.equal(a.choices[0]!.message.content, b.choices[0]!.message.content);
  });

  test('a seed makes sampled output reproducible', async () => {
    const ask = (seed: number) =>
      client.chat.completions.create({ model: 'tiny', messages: [{ role: 'user', content: 'tell me' }], max_tokens: 16, temperature: 1, seed });
    const [a, b] = [await ask(7), await ask(7)];
    assert.equal(a.choices[0]!.message.content, b.choices[0]!.message.content);
  });

  test('a stop sequence ends generation with finish_reason stop and is not included', async () => {
    const base = await client.chat.completions.create({ model: 'tiny', messages: [{ role: 'user', content: 'go' }], max_tokens: 24, temperature: 0 });
    const text = base.choices[0]!.message.content!;
    // Stop on a piece that appears after the first few characters of the greedy output.
    const stop = text.slice(6, 9);
    assert.ok(stop.trim().length > 0, `fixture output too short to pick a stop sequence: ${JSON.stringify(text)}`);
    const stopped = await client.chat.completions.create({
      model: 'tiny', messages: [{ role: 'user', content: 'go' }], max_tokens: 24, temperature: 0, stop: [stop],
    });
    const out = stopped.choices[0]!.message.content!;
    assert.equal(stopped.choices[0]!.finish_reason, 'stop');
    assert.ok(!out.includes(stop), `${JSON.stringify(out)} should end before ${JSON.stringify(stop)}`);
    assert.ok(text.startsWith(out));
  });

  test('streams chat.completion.chunk objects, the role first, then a usage chunk', async () => {
    const stream = await client.chat.completions.create({
      model: 'tiny', messages: [{ role: 'user', content: 'stream please' }], max_tokens: 10, temperature: 0,
      stream: true, stream_options: { include_usage: true },
    });
    const chunks: OpenAI.Chat.ChatCompletionChunk[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    assert.ok(chunks.length >= 3);
    assert.ok(chunks.every((c) => c.object === 'chat.completion.chunk' && c.id === chunks[0]!.id));
    assert.equal(chunks[0]!.choices[0]!.delta.role, 'assistant');
    const finish = chunks.find((c) => c.choices[0]?.finish_reason != null);
    assert.equal(finish?.choices[0]!.finish_reason, 'length');
    const last = chunks.at(-1)!;
    assert.deepEqual(last.choices, []);
    assert.equal(last.usage?.completion_tokens, 10);
    const text = chunks.map((c) => c.choices[0]?.delta.content ?? '').join('');
    const whole = await client.chat.completions.create({ model: 'tiny', messages: [{ role: 'user', content: 'stream please' }], max_tokens: 10, temperature: 0 });
    assert.equal(text, whole.choices[0]!.message.content);
  });

  test('a client that aborts mid-stream cancels generation and frees the sequence', async () => {
    const controller = new AbortController();
    const stream = await client.chat.completions.create(
      { model: 'tiny', messages: [{ role: 'user', content: 'a long answer' }], max_tokens: 3000, temperature: 1, stream: true },
      { signal: controller.signal },
    );
    let seen = 0;
    // The SDK ends the iteration quietly (or throws an abort error) once the signal fires.
    await (async () => {
      for await (const _chunk of stream) {
        if (++seen === 5) controller.abort();
      }
    })().catch((error: unknown) => assert.ok(error instanceof OpenAI.APIUserAbortError, String(error)));
    assert.ok(seen >= 5);
    // The daemon notices the disconnect and returns to idle well before 3000 tokens.
    let health: { model: { active: number } } | undefined;
    for (let i = 0; i < 100; i++) {
      health = (await (await fetch(`${daemon.url}/health`)).json()) as { model: { active: number } };
      if (health.model.active === 0) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.equal(health?.model.active, 0);
    let logged: Record<string, unknown> | undefined;
    for (let i = 0; i < 100 && logged === undefined; i++) {
      logged = daemon.logs.find((l) => l.msg === 'request' && l.finish === 'client_disconnected');
      if (logged === undefined) await new Promise((r) => setTimeout(r, 50));
    }
    assert.ok(logged, 'the request log records the cancelled generation');
    assert.ok((logged.completion_tokens as number) < 3000, `generation stopped early (${String(logged.completion_tokens)} tokens)`);
    // And the freed sequence serves the next request normally.
    const next = await client.chat.completions.create({ model: 'tiny', messages: [{ role: 'user', content: 'hi' }], max_tokens: 3 });
    assert.equal(next.usage?.completion_tokens, 3);
  });
});

describe('completions (legacy)', () => {
  test('a prompt string and a prompt array, one choice each in order', async () => {
    const one = await client.completions.create({ model: 'tiny', prompt: 'Once upon a time', max_tokens: 6, temperature: 0 });
    assert.equal(one.object, 'text_completion');
    assert.equal(one.choices[0]!.finish_reason, 'length');
    assert.equal(one.usage?.completion_tokens, 6);
    const many = await client.completions.create({ model: 'tiny', prompt: ['Once upon a time', 'hello'], max_tokens: 6, temperature: 0 });
    assert.deepEqual(many.choices.map((c) => c.index), [0, 1]);
    assert.equal(many.choices[0]!.text, one.choices[0]!.text);
    assert.equal(many.usage?.completion_tokens, 12);
  });

  test('streams text_completion chunks', async () => {
    const stream = await client.completions.create({ model: 'tiny', prompt: 'Once upon a time', max_tokens: 6, temperature: 0, stream: true });
    let text = '';
    let finish: string | null = null;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.text ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    const whole = await client.completions.create({ model: 'tiny', prompt: 'Once upon a time', max_tokens: 6, temperature: 0 });
    assert.equal(text, whole.choices[0]!.text);
    assert.equal(finish, 'length');
  });
});

describe('embeddings', () => {
  test('one input (the client asks for base64 by default) and a batch as floats', async () => {
    const single = await client.embeddings.create({ model: 'tiny', input: 'hello world' });
    assert.equal(single.object, 'list');
    assert.equal(single.data.length, 1);
    const vector = single.data[0]!.embedding;
    assert.equal(vector.length, 64);
    assert.ok(vector.every((x) => Number.isFinite(x)));
    assert.ok(single.usage.prompt_tokens > 0);

    const batch = await client.embeddings.create({ model: 'tiny', input: ['hello world', 'the quantum model'], encoding_format: 'float' });
    assert.deepEqual(batch.data.map((d) => d.index), [0, 1]);
    // float32 over the wire (base64) equals the float answer to float32 precision.
    batch.data[0]!.embedding.forEach((x, i) => assert.ok(Math.abs(x - vector[i]!) < 1e-5));
    assert.notDeepEqual(batch.data[0]!.embedding, batch.data[1]!.embedding);
    assert.ok(batch.usage.prompt_tokens > single.usage.prompt_tokens);
  });
});

describe('errors in the OpenAI envelope', () => {
  const post = (path: string, body: string, headers: Record<string, string> = {}) =>
    fetch(`${daemon.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });

  test('unknown model → 404 model_not_found naming the models there are', async () => {
    await assert.rejects(client.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'x' }] }), (error: unknown) => {
      assert.ok(error instanceof OpenAI.NotFoundError);
      assert.equal(error.code, 'model_not_found');
      assert.match(error.message, /tiny/);
      return true;
    });
  });

  test('malformed JSON → 400 invalid_json', async () => {
    const res = await post('/v1/chat/completions', '{"model": "tiny", ');
    assert.equal(res.status, 400);
    const body = (await res.json()) as { error: { type: string; code: string; message: string } };
    assert.equal(body.error.type, 'invalid_request_error');
    assert.equal(body.error.code, 'invalid_json');
  });

  test('wrong types, missing messages, unknown fields and n>1 → 400 naming the field', async () => {
    const cases: [object, string][] = [
      [{ model: 'tiny', messages: [{ role: 'user', content: 'x' }], temperature: 'hot' }, 'temperature'],
      [{ model: 'tiny', messages: [{ role: 'user', content: 'x' }], max_tokens: -1 }, 'max_tokens'],
      [{ model: 'tiny' }, 'messages'],
      [{ model: 'tiny', messages: 'hello' }, 'messages'],
      [{ model: 'tiny', messages: [{ role: 'wizard', content: 'x' }] }, 'messages.0.role'],
      [{ model: 'tiny', messages: [{ role: 'user', content: 'x' }], frobnicate: true }, 'frobnicate'],
      [{ model: 'tiny', messages: [{ role: 'user', content: 'x' }], n: 2 }, 'n'],
      [{ messages: [{ role: 'user', content: 'x' }] }, 'model'],
    ];
    for (const [body, param] of cases) {
      const res = await post('/v1/chat/completions', JSON.stringify(body));
      assert.equal(res.status, 400, JSON.stringify(body));
      const json = (await res.json()) as { error: { param: string; type: string; message: string } };
      assert.equal(json.error.param, param, JSON.stringify(json));
      assert.equal(json.error.type, 'invalid_request_error');
      assert.ok(json.error.message.length > 10);
    }
  });

  test('an oversized body → 413, and the daemon keeps serving', async () => {
    const huge = JSON.stringify({ model: 'tiny', messages: [{ role: 'user', content: 'x'.repeat(17 * 1024 * 1024) }] });
    // The daemon answers from Content-Length without reading the body, then closes; a raw
    // request lets the test read that answer even if the upload is cut off mid-write.
    const { status, body } = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      let answered = false;
      const req = request(`${daemon.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(huge) } }, (res) => {
        answered = true;
        let text = '';
        res.on('data', (d: Buffer) => { text += d.toString(); });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
        res.on('error', reject);
      });
      req.on('error', (error: NodeJS.ErrnoException) => { if (error.code !== 'EPIPE' && error.code !== 'ECONNRESET') reject(error); });
      req.on('close', () => { if (!answered) reject(new Error('connection closed without a response')); });
      req.end(huge);
    });
    assert.equal(status, 413);
    assert.equal((JSON.parse(body) as { error: { code: string } }).error.code, 'request_too_large');
    assert.equal((await fetch(`${daemon.url}/health`)).status, 200);
  });

  test('a prompt longer than the context → 400 context_length_exceeded', async () => {
    const res = await post('/v1/chat/completions', JSON.stringify({ model: 'tiny', messages: [{ role: 'user', content: 'hello '.repeat(6000) }] }));
    assert.equal(res.status, 400);
    assert.equal(((await res.json()) as { error: { code: string } }).error.code, 'context_length_exceeded');
  });

  test('images and audio answer 501 saying they arrive in V1.1', async () => {
    for (const path of ['/v1/images/generations', '/v1/audio/transcriptions']) {
      const res = await post(path, '{}');
      assert.equal(res.status, 501);
      const json = (await res.json()) as { error: { message: string; code: string } };
      assert.match(json.error.message, /V1\.1/);
      assert.equal(json.error.code, 'coming_in_v1_1');
    }
  });

  test('an unknown route → 404 in the envelope', async () => {
    const res = await fetch(`${daemon.url}/v1/nothing-here`);
    assert.equal(res.status, 404);
    assert.equal(((await res.json()) as { error: { type: string } }).error.type, 'invalid_request_error');
  });
});
