/**
 * Hostile and careless input against the real daemon: prompts of many megabytes, bodies built
 * to be slow to parse, huge names, and token accounting at the max_tokens boundary.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startDaemon, type DaemonProcess } from '../helpers/daemon-process.ts';

let daemon: DaemonProcess;
before(async () => {
  daemon = await startDaemon({ args: ['--parallel', '2'] });
});
after(async () => {
  assert.equal(await daemon.stop(), 0);
});

const postRaw = (path: string, body: string) =>
  fetch(`${daemon.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
const post = (path: string, body: unknown) => postRaw(path, JSON.stringify(body));

interface ErrorBody {
  error: { message: string; type: string; code: string | null; param: string | null };
}

/**
 * Polls /health every few ms while `work` runs and returns the slowest answer. Not a benchmark:
 * "the event loop is not held" is the behaviour under test, so a generous bound (far above a
 * busy machine's noise, far below the multi-second stalls this guards against) is asserted.
 */
async function slowestHealthDuring<T>(work: Promise<T>): Promise<{ result: T; slowestMs: number; polls: number }> {
  let done = false;
  const finished = work.finally(() => { done = true; });
  let slowestMs = 0;
  let polls = 0;
  while (!done) {
    const started = performance.now();
    const res = await fetch(`${daemon.url}/health`);
    await res.arrayBuffer();
    slowestMs = Math.max(slowestMs, performance.now() - started);
    polls++;
    await new Promise((r) => setTimeout(r, 5));
  }
  return { result: await finished, slowestMs, polls };
}
const HEALTH_BOUND_MS = 1500;

describe('prompts far larger than the context', () => {
  test('a 15.6 MB prompt is refused 400 context_length_exceeded without holding /health', async () => {
    // The model must be loaded first, or the poll measures the load.
    assert.equal((await post('/v1/chat/completions', { model: 'tiny', messages: [{ role: 'user', content: 'hi' }], max_tokens: 1 })).status, 200);
    for (const bytes of [15_600_000, 2_000_000]) {
      const content = 'lorem ipsum dolor sit amet '.repeat(Math.ceil(bytes / 27)).slice(0, bytes);
      const { result, slowestMs } = await slowestHealthDuring((async () => {
        const res = await post('/v1/chat/completions', { model: 'tiny', messages: [{ role: 'user', content }] });
        return { status: res.status, body: (await res.json()) as ErrorBody };
      })());
      assert.equal(result.status, 400);
      assert.equal(result.body.error.code, 'context_length_exceeded');
      assert.equal(result.body.error.param, 'messages');
      assert.match(result.body.error.message, /at least \d+ tokens/);
      assert.ok(slowestMs < HEALTH_BOUND_MS, `/health took ${slowestMs.toFixed(0)} ms during a ${bytes}-byte prompt`);
    }
  });

  test('a prompt just past the cheap bound is counted in slices and refused; completions and embeddings too', async () => {
    // ~45 KB of words: under the bytes-per-token bound, over the context once counted.
    const text = Array.from({ length: 9000 }, (_, i) => `w${i % 97}`).join(' ');
    const chat = await post('/v1/chat/completions', { model: 'tiny', messages: [{ role: 'user', content: text }] });
    assert.equal(chat.status, 400);
    assert.equal(((await chat.json()) as ErrorBody).error.code, 'context_length_exceeded');
    const completion = await post('/v1/completions', { model: 'tiny', prompt: 'x'.repeat(3_000_000) });
    assert.equal(completion.status, 400);
    assert.equal(((await completion.json()) as ErrorBody).error.param, 'prompt');
    const embedding = await post('/v1/embeddings', { model: 'tiny', input: ['ok', 'y'.repeat(3_000_000)] });
    assert.equal(embedding.status, 400);
    const body = (await embedding.json()) as ErrorBody;
    assert.equal(body.error.code, 'context_length_exceeded');
    assert.match(body.error.message, /^input\[1\]/);
  });

  test('a 16 MB body nested a million deep is refused 400 without holding /health', async () => {
    const depth = 8_000_000;
    const body = `{"model":"tiny","messages":${'['.repeat(depth)}${']'.repeat(depth)}}`;
    const { result, slowestMs } = await slowestHealthDuring(postRaw('/v1/chat/completions', body).then(async (r) => ({ status: r.status, body: (await r.json()) as ErrorBody })));
    assert.equal(result.status, 400);
    assert.equal(result.body.error.code, 'json_too_complex');
    assert.ok(slowestMs < HEALTH_BOUND_MS, `/health took ${slowestMs.toFixed(0)} ms`);
  });

  test('a large body is parsed and validated off the event loop, with the same answers', async () => {
    const padding = 'u'.repeat(200_000);
    const res = await post('/v1/chat/completions', { model: 'tiny', messages: [{ role: 'user', content: 'hi' }], max_tokens: 2, user: padding });
    assert.equal(res.status, 200);
    assert.equal(((await res.json()) as { usage: { completion_tokens: number } }).usage.completion_tokens, 2);
    const completion = await post('/v1/completions', { model: 'tiny', prompt: 'a', max_tokens: 1, user: padding });
    assert.equal(completion.status, 200);
    const inputs = Array.from({ length: 100 }, (_, i) => `t${i} `.repeat(200));
    assert.ok(JSON.stringify(inputs).length > 64 * 1024);
    const embeddings = await post('/v1/embeddings', { model: 'tiny', input: inputs, encoding_format: 'float' });
    assert.equal(embeddings.status, 200);
    assert.equal(((await embeddings.json()) as { data: unknown[] }).data.length, 100);
    // Schema errors found on the worker name the field, as on the event loop.
    const bad = await post('/v1/chat/completions', { model: 'tiny', messages: [{ role: 'user', content: 'hi' }], temperature: 'hot', user: padding });
    assert.equal(bad.status, 400);
    assert.equal(((await bad.json()) as ErrorBody).error.param, 'temperature');
    const unknown = await post('/v1/embeddings', { model: 'tiny', input: 'x', padding });
    assert.equal(unknown.status, 400);
    assert.match(((await unknown.json()) as ErrorBody).error.message, /Unrecognized request argument supplied: padding/);
  });
});

describe('echoes and limits', () => {
  test('a 1 MB model name comes back truncated in the 404', async () => {
    const name = 'm'.repeat(1_048_576);
    for (const res of [await post('/v1/chat/completions', { model: name, messages: [{ role: 'user', content: 'x' }] }), await fetch(`${daemon.url}/v1/models/${'n'.repeat(12_000)}`)]) {
      assert.equal(res.status, 404);
      const text = await res.text();
      assert.ok(text.length < 2048, `404 body is ${text.length} bytes`);
      assert.equal((JSON.parse(text) as ErrorBody).error.code, 'model_not_found');
    }
  });

  test('max_tokens above the context size is 400 invalid_value, as OpenAI answers', async () => {
    const res = await post('/v1/chat/completions', { model: 'tiny', messages: [{ role: 'user', content: 'x' }], max_tokens: 1_000_000 });
    assert.equal(res.status, 400);
    const { error } = (await res.json()) as ErrorBody;
    assert.equal(error.code, 'invalid_value');
    assert.equal(error.param, 'max_tokens');
  });
});

describe('token accounting', () => {
  test('completion_tokens equals the tokens generated when finish_reason is length, streamed or not, with stop sequences', async () => {
    const seen: string[] = [];
    for (let maxTokens = 1; maxTokens <= 6; maxTokens++) {
      for (const stream of [false, true]) {
        for (const stop of [undefined, ['<', 'zz'], ['the']]) {
          for (const seed of [1, 2]) {
            const res = await post('/v1/chat/completions', {
              model: 'tiny', messages: [{ role: 'user', content: `count ${seed}` }], max_tokens: maxTokens, temperature: 1.2, seed, stop, stream,
              ...(stream ? { stream_options: { include_usage: true } } : {}),
            });
            assert.equal(res.status, 200);
            let finish: string | undefined;
            let completionTokens: number | undefined;
            if (stream) {
              for (const line of (await res.text()).split('\n')) {
                if (!line.startsWith('data: {')) continue;
                const chunk = JSON.parse(line.slice(6)) as { choices: { finish_reason: string | null }[]; usage?: { completion_tokens: number } };
                finish = chunk.choices[0]?.finish_reason ?? finish;
                if (chunk.usage !== undefined) completionTokens = chunk.usage.completion_tokens;
              }
            } else {
              const body = (await res.json()) as { choices: { finish_reason: string }[]; usage: { completion_tokens: number } };
              finish = body.choices[0]!.finish_reason;
              completionTokens = body.usage.completion_tokens;
            }
            seen.push(`${finish}`);
            if (finish === 'length') assert.equal(completionTokens, maxTokens, `max_tokens ${maxTokens}, stream ${stream}, stop ${JSON.stringify(stop)}`);
            else assert.ok(completionTokens! >= 1 && completionTokens! <= maxTokens);
          }
        }
      }
    }
    assert.ok(seen.filter((f) => f === 'length').length > 20, 'most runs end on max_tokens');
  });

  test('without max_tokens a reply stops at the --max-tokens ceiling', async () => {
    const capped = await startDaemon({ args: ['--max-tokens', '3'] });
    try {
      const res = await fetch(`${capped.url}/v1/chat/completions`, {
        method: 'POST', headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'tiny', messages: [{ role: 'user', content: 'go' }], temperature: 1.5, seed: 4 }),
      });
      const body = (await res.json()) as { choices: { finish_reason: string }[]; usage: { completion_tokens: number } };
      assert.ok(body.usage.completion_tokens <= 3);
      if (body.choices[0]!.finish_reason === 'length') assert.equal(body.usage.completion_tokens, 3);
    } finally {
      await capped.stop();
    }
  });
});
