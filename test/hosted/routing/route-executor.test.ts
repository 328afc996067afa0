import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { GenerationPart } from '../../../src/inference/language-model.ts';
import { AllBackendsFailedError } from '../../../src/hosted/routing/all-backends-failed-error.ts';
import { checkRouteConfig } from '../../../src/hosted/routing/load-route-config.ts';
import { RouteExecutor } from '../../../src/hosted/routing/route-executor.ts';
import { planRoute } from '../../../src/hosted/routing/route-planner.ts';
import { RouteRefusedError } from '../../../src/hosted/routing/route-refused-error.ts';
import { routeConfigSchema, type RouteConfig } from '../../../src/hosted/route-config.ts';
import { ApiError } from '../../../src/shared/api-error.ts';
import { answer, contentChunk, finishChunk, sse, startScriptedUpstream, type Handler, type ScriptedUpstream } from '../../helpers/scripted-upstream.ts';
import { freePort } from '../../helpers/free-port.ts';

const energy = { joules_per_prompt_token: 0.01, joules_per_completion_token: 0.5, joules_per_second: 0 };
const usage = (prompt: number, completion: number) => ({ id: 'x', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [], usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion } });
const hello = sse([contentChunk('Hel'), contentChunk('lo'), finishChunk('stop'), usage(12, 2), '[DONE]']);

/** Streams `w0 ` … `w29 ` one chunk every `delayMs`, stopping when the client goes away. */
function thirtyWords(delayMs: number): Handler {
  const words = Array.from({ length: 30 }, (_, i) => contentChunk(`w${i} `));
  return async (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    for (const w of words) {
      if (res.destroyed) return;
      res.write(`data: ${JSON.stringify(w)}\n\n`);
      await sleep(delayMs);
    }
    res.end('data: [DONE]\n\n');
  };
}

let first: ScriptedUpstream;
let second: ScriptedUpstream;
let deadPort: number;

before(async () => {
  first = await startScriptedUpstream();
  second = await startScriptedUpstream();
  deadPort = await freePort();
});
after(async () => {
  await first.close();
  await second.close();
});

function configWith(firstUrl: string, secondUrl: string): RouteConfig {
  const backend = (id: string, base_url: string, provider: string) => ({
    id, kind: 'upstream', upstream: { base_url }, sharing: 'shared', execution_plane: 'supercomputer', provider, models: { chat: `${id}-model` }, energy,
  });
  return checkRouteConfig(routeConfigSchema.parse({
    default_policy: 'supercomputer-fast',
    models: [{ id: 'chat', family: 'chat' }],
    backends: [backend('primary', firstUrl, 'vllm-a'), backend('secondary', secondUrl, 'vllm-b')],
    routes: [{ policy: 'supercomputer-fast', queue_class: 'interactive', backends: ['primary', 'secondary'] }],
  }));
}

async function run(config: RouteConfig, extra: { maxJoules?: number; maxLatencyMs?: number; maxTokens?: number; streamed?: boolean } = {}) {
  const executor = new RouteExecutor({ env: {} });
  const parts: GenerationPart[] = [];
  try {
    const plan = planRoute(config, { model: 'chat', privacyTier: 'mesh_safe', plan: { enterprise: false } });
    const result = await executor.execute({
      plan, messages: [{ role: 'user', content: 'Say hello' }], options: { maxTokens: extra.maxTokens },
      maxJoules: extra.maxJoules, maxLatencyMs: extra.maxLatencyMs,
      // A non-streamed caller passes no onPart: it sees nothing until the end.
      onPart: extra.streamed === false ? undefined : (p) => parts.push(p),
    });
    return { result, parts };
  } finally {
    await executor.close();
  }
}

describe('RouteExecutor over real OpenAI-compatible servers', () => {
  it('serves from the first backend with full route evidence when it works', async () => {
    first.handle(hello);
    const before = first.requests.length;
    const { result, parts } = await run(configWith(first.baseUrl, second.baseUrl));
    assert.equal(result.text, 'Hello');
    assert.equal(result.outcome, 'completed');
    assert.equal(result.finishReason, 'stop');
    assert.deepEqual(parts, [{ type: 'text-delta', text: 'Hel' }, { type: 'text-delta', text: 'lo' }]);
    assert.deepEqual(result.usage, { promptTokens: 12, completionTokens: 2 });
    assert.equal((first.requests[before]?.body as { model: string }).model, 'primary-model');
    const { latency_ms: latency, ...route } = result.route;
    assert.ok(Number.isInteger(latency) && latency >= 0);
    assert.deepEqual(route, {
      execution_plane: 'supercomputer', policy: 'supercomputer-fast', privacy_tier: 'mesh_safe', model: 'chat', provider: 'vllm-a',
      raw_joules: null, estimated_joules: 1.12, billable_joules: 1.12, fallback: false, fallback_reason: null,
    });
    assert.equal(result.queueClass, 'interactive');
  });

  it('falls back on a 500 and says why', async () => {
    first.handle(answer(500, { error: { message: 'boom', type: 'server_error' } }));
    second.handle(hello);
    const { result } = await run(configWith(first.baseUrl, second.baseUrl));
    assert.equal(result.text, 'Hello');
    assert.equal(result.backend, 'secondary');
    assert.equal(result.route.provider, 'vllm-b');
    assert.equal(result.route.fallback, true);
    assert.equal(result.route.fallback_reason, 'backend_error:upstream_error');
  });

  it('falls back when the connection is refused', async () => {
    second.handle(hello);
    const { result } = await run(configWith(`http://127.0.0.1:${deadPort}/v1`, second.baseUrl));
    assert.equal(result.text, 'Hello');
    assert.equal(result.route.fallback_reason, 'backend_error:upstream_unavailable');
  });

  it('falls back when no token arrived by x-svc-max-latency-ms, and cancels the slow backend', async () => {
    first.handle((_req, res) => { res.writeHead(200, { 'content-type': 'text/event-stream' }); /* and then nothing */ });
    second.handle(hello);
    const count = first.requests.length;
    const started = performance.now();
    const { result } = await run(configWith(first.baseUrl, second.baseUrl), { maxLatencyMs: 300 });
    assert.ok(performance.now() - started < 3000);
    assert.equal(result.text, 'Hello');
    assert.equal(result.route.fallback_reason, 'latency_ceiling');
    await first.requests[count]!.aborted;
  });

  it('every backend past x-svc-max-latency-ms → 503 latency_ceiling', async () => {
    const silent: Handler = (_req, res) => { res.writeHead(200, { 'content-type': 'text/event-stream' }); };
    first.handle(silent);
    second.handle(silent);
    await assert.rejects(run(configWith(first.baseUrl, second.baseUrl), { maxLatencyMs: 100 }), (error: unknown) => {
      assert.ok(error instanceof AllBackendsFailedError);
      assert.equal(error.status, 503);
      assert.deepEqual(error.attempts.map((a) => a.reason), ['latency_ceiling', 'latency_ceiling']);
      return true;
    });
  });

  it('stops a stream at the Joule ceiling, lowers the caller\'s max_tokens to the budget, and bills no more than the ceiling', async () => {
    first.handle(thirtyWords(5));
    const count = first.requests.length;
    // The upstream's prompt bound: 64 (the template, once) + 'user' 4 + 'Say hello' 9 bytes + 8
    // (per message) = 85 tokens → 0.85 J; each completion token 0.5 J.
    const { result, parts } = await run(configWith(first.baseUrl, second.baseUrl), { maxJoules: 3, maxTokens: 100 });
    assert.equal(result.outcome, 'stopped_at_joule_ceiling');
    assert.equal(result.finishReason, 'length');
    assert.equal(parts.length, 4, 'floor((3 − 0.85) / 0.5) = 4 tokens fit');
    assert.equal(result.text, 'w0 w1 w2 w3 ');
    assert.equal((first.requests[count]?.body as { max_tokens: number }).max_tokens, 4);
    // The upstream reported no usage: the bill takes the bound, never less than the work.
    assert.equal(result.usage.promptTokens, 85);
    assert.equal(result.route.estimated_joules, 2.85);
    assert.equal(result.route.billable_joules, 2.85);
    await first.requests[count]!.aborted;
  });

  it('refuses up front what cannot fit the Joule ceiling, calling nobody', async () => {
    const count = first.requests.length + second.requests.length;
    await assert.rejects(run(configWith(first.baseUrl, second.baseUrl), { maxJoules: 0 }), (error: unknown) => {
      assert.ok(error instanceof RouteRefusedError);
      assert.equal(error.code, 'joule_ceiling_too_low');
      assert.equal(error.status, 400);
      return true;
    });
    assert.equal(first.requests.length + second.requests.length, count);
  });

  it('does not fall back on the client\'s own mistake (a 400)', async () => {
    first.handle(answer(400, { error: { message: 'bad temperature', type: 'invalid_request_error', param: 'temperature' } }));
    const count = second.requests.length;
    await assert.rejects(run(configWith(first.baseUrl, second.baseUrl)), (error: unknown) => error instanceof ApiError && error.status === 400);
    assert.equal(second.requests.length, count);
  });

  it('all backends unreachable → 503 hosted_route_unavailable with each reason', async () => {
    await assert.rejects(run(configWith(`http://127.0.0.1:${deadPort}/v1`, `http://127.0.0.1:${deadPort}/v2`)), (error: unknown) => {
      assert.ok(error instanceof AllBackendsFailedError);
      assert.equal(error.status, 503);
      assert.equal(error.type, 'server_error');
      assert.equal(error.code, 'hosted_route_unavailable');
      assert.equal(error.retryAfterSeconds, 1);
      assert.deepEqual(error.attempts, [
        { backend: 'primary', reason: 'backend_error:upstream_unavailable' },
        { backend: 'secondary', reason: 'backend_error:upstream_unavailable' },
      ]);
      return true;
    });
  });

  it('all backends answering 500 → 502, not echoing their messages', async () => {
    first.handle(answer(500, { error: { message: 'secret internals' } }));
    second.handle(answer(500, { error: { message: 'secret internals' } }));
    await assert.rejects(run(configWith(first.baseUrl, second.baseUrl)), (error: unknown) => {
      assert.ok(error instanceof AllBackendsFailedError);
      assert.equal(error.status, 502);
      assert.ok(!error.message.includes('secret'), error.message);
      return true;
    });
  });

  it('a failure after output has started ends the request as failed, without falling back', async () => {
    first.handle((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`data: ${JSON.stringify(contentChunk('partial'))}\n\n`);
      setTimeout(() => res.destroy(), 20);
    });
    const count = second.requests.length;
    const { result } = await run(configWith(first.baseUrl, second.baseUrl));
    assert.equal(result.outcome, 'failed');
    assert.equal(result.error?.code, 'upstream_unavailable');
    assert.equal(result.usage.completionTokens, 1);
    assert.equal(second.requests.length, count);
  });

  it('a generous Joule ceiling sets no max_tokens the caller did not send (it could exceed the model\'s limit); the stream stop still holds', async () => {
    first.handle(thirtyWords(2));
    let count = first.requests.length;
    const generous = await run(configWith(first.baseUrl, second.baseUrl), { maxJoules: 100_000 });
    assert.equal(generous.result.outcome, 'completed');
    assert.equal((first.requests[count]?.body as { max_tokens?: number }).max_tokens, undefined);
    count = first.requests.length;
    const tight = await run(configWith(first.baseUrl, second.baseUrl), { maxJoules: 3 });
    assert.equal(tight.result.outcome, 'stopped_at_joule_ceiling');
    assert.equal(tight.parts.length, 4);
    assert.equal((first.requests[count]?.body as { max_tokens?: number }).max_tokens, undefined);
    await first.requests[count]!.aborted;
  });

  it('x-svc-max-latency-ms past 2^31 − 1 acts as no ceiling (setTimeout would fire at once)', async () => {
    first.handle(hello);
    const { result } = await run(configWith(first.baseUrl, second.baseUrl), { maxLatencyMs: 3_000_000_000 });
    assert.equal(result.outcome, 'completed');
    assert.equal(result.route.fallback, false);
  });

  it('a non-streamed caller saw nothing yet: a failure part-way falls back to the next backend, which answers whole', async () => {
    first.handle((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`data: ${JSON.stringify(contentChunk('partial'))}\n\n`);
      setTimeout(() => res.destroy(), 20);
    });
    second.handle(hello);
    const { result } = await run(configWith(first.baseUrl, second.baseUrl), { streamed: false });
    assert.equal(result.outcome, 'completed');
    assert.equal(result.text, 'Hello');
    assert.equal(result.route.provider, 'vllm-b');
    assert.equal(result.route.fallback, true);
    assert.match(result.route.fallback_reason ?? '', /^backend_error:upstream_unavailable/);
  });
});

describe('RouteExecutor when the caller goes away mid-answer', () => {
  it('counts and bills every part the backend produced after the abort, as it did before the abort', async () => {
    // A backend that finishes its answer whatever the signal says (as an engine mid-token does)
    // and reports no usage, so the executor's own count is what gets billed.
    const caller = new AbortController();
    const model = {
      id: 'fake',
      chat: async (_messages: unknown, options: { onPart?: (part: GenerationPart) => void }) => {
        for (const text of ['a', 'b', 'c', 'd']) {
          options.onPart?.({ type: 'text-delta', text });
          if (text === 'a') caller.abort(new Error('client left'));
          await sleep(1);
        }
        return { text: 'abcd', toolCalls: [], finishReason: 'stop' as const, usage: { promptTokens: 0, completionTokens: 0 } };
      },
    };
    const engine = { list: () => [{ id: 'fake', capabilities: ['chat'] }], model: (id: string) => (id === 'fake' ? model : undefined) };
    const config = checkRouteConfig(routeConfigSchema.parse({
      default_policy: 'supercomputer-fast',
      models: [{ id: 'chat', family: 'chat' }],
      backends: [{ id: 'engine', kind: 'engine', sharing: 'dedicated', execution_plane: 'supercomputer', provider: 'svc-llama.cpp', models: { chat: 'fake' }, energy }],
      routes: [{ policy: 'supercomputer-fast', queue_class: 'interactive', backends: ['engine'] }],
    }));
    const executor = new RouteExecutor({ engine: engine as never });
    const parts: string[] = [];
    const result = await executor.execute({
      plan: planRoute(config, { model: 'chat', privacyTier: 'mesh_safe', plan: { enterprise: false } }),
      messages: [{ role: 'user', content: 'Hi' }], options: {}, signal: caller.signal,
      onPart: (p) => { if (p.type === 'text-delta') parts.push(p.text); },
    });
    assert.equal(result.outcome, 'aborted');
    assert.equal(result.usage.completionTokens, 4);
    assert.deepEqual(parts, ['a', 'b', 'c', 'd']);

    // A Joule ceiling the answer crosses after the caller left does not make it a ceiling stop
    // (which would bind an Idempotency-Key to an answer nobody received): it stays aborted.
    const again = new AbortController();
    const late = { ...model, chat: async (_messages: unknown, options: { onPart?: (part: GenerationPart) => void }) => {
      for (const text of ['a', 'b', 'c', 'd']) {
        options.onPart?.({ type: 'text-delta', text });
        if (text === 'a') again.abort(new Error('client left'));
        await sleep(1);
      }
      return { text: 'abcd', toolCalls: [], finishReason: 'stop' as const, usage: { promptTokens: 0, completionTokens: 0 } };
    } };
    const ceilingResult = await new RouteExecutor({ engine: { ...engine, model: () => late } as never }).execute({
      plan: planRoute(config, { model: 'chat', privacyTier: 'mesh_safe', plan: { enterprise: false } }),
      // This engine never counts its prompt, so the stop rule uses the bound (64 + 4 + 2 + 8 = 78
      // tokens, 0.78 J): the third token (2.28 J) would cross 1.9 J, after the caller left at the first.
      messages: [{ role: 'user', content: 'Hi' }], options: {}, signal: again.signal, maxJoules: 1.9,
      onPart: () => {},
    });
    assert.equal(ceilingResult.outcome, 'aborted');
  });
});

describe('RouteExecutor when the latency ceiling passes while the engine works on the prompt', () => {
  /** An engine that counts its prompt, then evaluates it for `evalMs` whatever the abort says (as llama.cpp does once begun). */
  function slowPromptEngine(promptTokens: number, evalMs: number, countAfterMs = 0) {
    let counted = false;
    const model = {
      id: 'fake',
      chat: async (_messages: unknown, options: { signal?: AbortSignal; onStarted?: () => void; onPromptTokens?: (n: number) => number | undefined }) => {
        options.onStarted?.();
        await sleep(countAfterMs);
        options.onPromptTokens?.(promptTokens);
        counted = true;
        await sleep(evalMs);
        options.signal?.throwIfAborted();
        return { text: 'late', toolCalls: [], finishReason: 'stop' as const, usage: { promptTokens, completionTokens: 1 } };
      },
    };
    return { registry: { list: () => [{ id: 'fake', capabilities: ['chat'] }], model: (id: string) => (id === 'fake' ? model : undefined) }, wasCounted: () => counted };
  }
  const config = checkRouteConfig(routeConfigSchema.parse({
    default_policy: 'supercomputer-fast',
    models: [{ id: 'chat', family: 'chat' }],
    backends: [{ id: 'engine', kind: 'engine', sharing: 'dedicated', execution_plane: 'supercomputer', provider: 'svc-llama.cpp', models: { chat: 'fake' }, energy }],
    routes: [{ policy: 'supercomputer-fast', queue_class: 'interactive', backends: ['engine'] }],
  }));
  const plan = () => planRoute(config, { model: 'chat', privacyTier: 'mesh_safe', plan: { enterprise: false } });

  it('bills the prompt the engine had begun (a failed request with evidence), not nothing', async () => {
    const engine = slowPromptEngine(1000, 80);
    const result = await new RouteExecutor({ engine: engine.registry as never }).execute({
      plan: plan(), messages: [{ role: 'user', content: 'Hi' }], options: {}, maxLatencyMs: 20, onPart: () => {},
    });
    assert.equal(result.outcome, 'failed');
    assert.ok(result.error instanceof AllBackendsFailedError);
    assert.equal(result.error.status, 503);
    // 1000 prompt tokens × 0.01 J (this profile has no per-second term).
    assert.deepEqual(result.attempts, [{ backend: 'engine', reason: 'latency_ceiling', joules: 10 }]);
    assert.equal(result.route.billable_joules, 10);
    assert.equal(result.route.fallback_reason, 'latency_ceiling');
  });

  it('bills nothing when the ceiling passed before the engine counted its prompt: it is never evaluated', async () => {
    const engine = slowPromptEngine(1000, 0, 60);
    await assert.rejects(new RouteExecutor({ engine: engine.registry as never }).execute({
      plan: plan(), messages: [{ role: 'user', content: 'Hi' }], options: {}, maxLatencyMs: 20, onPart: () => {},
    }), (error: unknown) => {
      assert.ok(error instanceof AllBackendsFailedError);
      assert.deepEqual(error.attempts, [{ backend: 'engine', reason: 'latency_ceiling' }]);
      return true;
    });
    assert.equal(engine.wasCounted(), false);
  });
});

describe('RouteExecutor: the Joule ceiling holds on time and across backends', () => {
  /** An engine that counts `promptTokens` and then waits for the abort (or answers after `answerMs`). */
  function countingEngine(promptTokens: number, answerMs = 0) {
    const model = {
      id: 'fake',
      chat: async (_messages: unknown, options: { signal?: AbortSignal; onStarted?: () => void; onPromptTokens?: (n: number) => number | undefined }) => {
        options.onStarted?.();
        options.onPromptTokens?.(promptTokens);
        await sleep(answerMs);
        options.signal?.throwIfAborted();
        return { text: 'ok', toolCalls: [], finishReason: 'stop' as const, usage: { promptTokens, completionTokens: 1 } };
      },
    };
    return { list: () => [{ id: 'fake', capabilities: ['chat'] }], model: (id: string) => (id === 'fake' ? model : undefined) };
  }
  const mixed = (upstreamUrl: string, perSecond = 0) => checkRouteConfig(routeConfigSchema.parse({
    default_policy: 'supercomputer-fast',
    models: [{ id: 'chat', family: 'chat' }],
    backends: [
      { id: 'engine', kind: 'engine', sharing: 'dedicated', execution_plane: 'supercomputer', provider: 'svc-llama.cpp', models: { chat: 'fake' }, energy },
      { id: 'primary', kind: 'upstream', upstream: { base_url: upstreamUrl }, sharing: 'shared', execution_plane: 'supercomputer', provider: 'vllm-a', models: { chat: 'primary-model' }, energy: { ...energy, joules_per_second: perSecond } },
    ],
    routes: [{ policy: 'supercomputer-fast', queue_class: 'interactive', backends: ['engine', 'primary'] }],
  }));
  const plan = (config: RouteConfig) => planRoute(config, { model: 'chat', privacyTier: 'mesh_safe', plan: { enterprise: false } });

  it('a stalled backend is stopped when its time alone reaches the ceiling, not billed past it by the stall', async () => {
    // Nothing for 5 s; at 1 J a second the 3 J ceiling leaves (3 − 0.85 prompt bound − 0.5 for a token) / 1 = 1.65 s.
    first.handle(async (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      await sleep(5000);
      if (!res.destroyed) res.end('data: [DONE]\n\n');
    });
    const config = checkRouteConfig(routeConfigSchema.parse({
      default_policy: 'supercomputer-fast',
      models: [{ id: 'chat', family: 'chat' }],
      backends: [{ id: 'primary', kind: 'upstream', upstream: { base_url: first.baseUrl }, sharing: 'shared', execution_plane: 'supercomputer', provider: 'vllm-a', models: { chat: 'primary-model' }, energy: { ...energy, joules_per_second: 1 } }],
      routes: [{ policy: 'supercomputer-fast', queue_class: 'interactive', backends: ['primary'] }],
    }));
    const executor = new RouteExecutor({ env: {} });
    const started = performance.now();
    const result = await executor.execute({ plan: plan(config), messages: [{ role: 'user', content: 'Say hello' }], options: {}, maxJoules: 3, onPart: () => {} });
    await executor.close();
    assert.equal(result.outcome, 'stopped_at_joule_ceiling');
    assert.ok(performance.now() - started < 4500, 'stopped before the stall ended');
    // The bill is the work: the prompt bound and the time it ran, about the ceiling less one token.
    assert.equal(result.route.billable_joules, result.route.estimated_joules);
    assert.ok(result.route.billable_joules <= 3, String(result.route.billable_joules));
  });

  it('a backend that counts a prompt too large for the ceiling gives way to a cheaper one, which answers', async () => {
    first.handle(hello);
    // The engine counts 1,000 tokens (10 J); the upstream's bound for 'Say hello' is 85 (0.85 J).
    const executor = new RouteExecutor({ engine: countingEngine(1000) as never, env: {} });
    const result = await executor.execute({ plan: plan(mixed(first.baseUrl)), messages: [{ role: 'user', content: 'Say hello' }], options: {}, maxJoules: 5, onPart: () => {} });
    await executor.close();
    assert.equal(result.outcome, 'completed');
    assert.equal(result.route.provider, 'vllm-a');
    assert.equal(result.route.fallback_reason, 'joule_ceiling');
    // When none fits, the refusal is the answer, as when nothing is tried.
    await assert.rejects(new RouteExecutor({ engine: countingEngine(1000) as never, env: {} }).execute({
      plan: plan(mixed(first.baseUrl)), messages: [{ role: 'user', content: 'x'.repeat(2000) }], options: {}, maxJoules: 5, onPart: () => {},
    }), (error: unknown) => error instanceof RouteRefusedError && error.code === 'joule_ceiling_too_low');
  });

  it('the work of a backend given up on comes out of the ceiling the next one gets', async () => {
    first.handle(hello);
    const count = first.requests.length;
    // The engine counts 1,000 tokens (10 J) and is given up at the latency ceiling; 12 J leave 2 J
    // for the upstream: (2 − 0.85) / 0.5 → max_tokens 2 of the caller's 100.
    const executor = new RouteExecutor({ engine: countingEngine(1000, 60) as never, env: {} });
    const result = await executor.execute({ plan: plan(mixed(first.baseUrl)), messages: [{ role: 'user', content: 'Say hello' }], options: { maxTokens: 100 }, maxJoules: 12, maxLatencyMs: 20, onPart: () => {} });
    await executor.close();
    assert.equal(result.route.provider, 'vllm-a');
    assert.deepEqual(result.attempts, [{ backend: 'engine', reason: 'latency_ceiling', joules: 10 }]);
    assert.equal((first.requests[count]?.body as { max_tokens: number }).max_tokens, 2);
  });
});
