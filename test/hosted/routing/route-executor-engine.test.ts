import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { LlamaEngine } from '../../../src/inference/llama-engine.ts';
import { ModelCatalog } from '../../../src/inference/model-catalog.ts';
import type { GenerationPart } from '../../../src/inference/language-model.ts';
import { loadRouteConfig } from '../../../src/hosted/routing/load-route-config.ts';
import { RaplMeter } from '../../../src/hosted/routing/rapl-meter.ts';
import { RouteExecutor } from '../../../src/hosted/routing/route-executor.ts';
import { RouteRefusedError } from '../../../src/hosted/routing/route-refused-error.ts';
import { planRoute } from '../../../src/hosted/routing/route-planner.ts';
import { tinyModelPath } from '../../helpers/daemon-process.ts';

const quiet = { info() {}, warn() {}, debug() {} };
let engine: LlamaEngine;
let powercap: string;

before(async () => {
  const catalog = await ModelCatalog.load([{ id: 'tiny', path: tinyModelPath() }], { dataDir: mkdtempSync(join(tmpdir(), 'svc-data-')), sources: new Set() });
  engine = new LlamaEngine(catalog, { parallel: 1, queueSize: 4, contextSize: 2048, defaultMaxTokens: 16, keepAliveMs: 60_000, gpu: 'cpu', threads: 1, log: quiet });
  powercap = mkdtempSync(join(tmpdir(), 'svc-powercap-'));
  mkdirSync(join(powercap, 'intel-rapl:0'));
  writeFileSync(join(powercap, 'intel-rapl:0', 'name'), 'package-0\n');
  writeFileSync(join(powercap, 'intel-rapl:0', 'energy_uj'), '1000000\n');
  writeFileSync(join(powercap, 'intel-rapl:0', 'max_energy_range_uj'), '262143328850\n');
});
after(async () => {
  await engine.close();
  rmSync(powercap, { recursive: true, force: true });
});

describe('RouteExecutor on the in-process engine (default configuration, real tiny GGUF)', () => {
  it('generates through @default, with estimated Joules from the profile and no raw figure without RAPL', async () => {
    const config = loadRouteConfig();
    const executor = new RouteExecutor({ engine });
    const parts: GenerationPart[] = [];
    const result = await executor.execute({
      plan: planRoute(config, { model: 'svc-chat', plan: { enterprise: false } }),
      messages: [{ role: 'user', content: 'Hi' }], options: { maxTokens: 8, temperature: 0, seed: 1 },
      onPart: (p) => parts.push(p),
    });
    assert.equal(result.backend, 'engine');
    assert.equal(result.outcome, 'completed');
    assert.ok(result.usage.promptTokens > 0 && result.usage.completionTokens > 0);
    assert.equal(parts.filter((p) => p.type === 'text-delta').map((p) => (p as { text: string }).text).join(''), result.text);
    assert.equal(result.route.provider, 'svc-llama.cpp');
    assert.equal(result.route.privacy_tier, 'personal');
    assert.equal(result.route.raw_joules, null);
    assert.ok(result.route.estimated_joules > 0);
    assert.equal(result.route.billable_joules, result.route.estimated_joules);
  });

  it('takes raw_joules from RAPL when the host exposes it, and bills the larger of it and the estimate', async () => {
    const meter = RaplMeter.open(powercap);
    assert.ok(meter !== null);
    const executor = new RouteExecutor({ engine, meter });
    const result = await executor.execute({
      plan: planRoute(loadRouteConfig(), { model: 'svc-chat', plan: { enterprise: false } }),
      messages: [{ role: 'user', content: 'Hi' }],
      options: { maxTokens: 4, temperature: 0, seed: 1 },
      // The counter moves while the request runs (the fake tree stands in for the kernel).
      onPart: () => writeFileSync(join(powercap, 'intel-rapl:0', 'energy_uj'), '3500000\n'),
    });
    assert.equal(result.route.raw_joules, 2.5);
    assert.equal(result.route.billable_joules, Math.max(2.5, result.route.estimated_joules));
  });

  it('stops at the Joule ceiling on the engine too, on the engine\'s own count of the prompt', async () => {
    const config = loadRouteConfig();
    const plan = planRoute(config, { model: 'svc-chat', plan: { enterprise: false } });
    const messages = [{ role: 'user' as const, content: 'Hi' }];
    // What the engine counts for 'Hi' once its chat template is applied.
    const counted = (await new RouteExecutor({ engine }).execute({ plan, messages, options: { maxTokens: 1, temperature: 0, seed: 1 } })).usage.promptTokens;
    assert.ok(counted > 5, `the template counts: ${counted} tokens`);
    // 0.06 J a prompt token, 0.6 J a completion token: 2 completion tokens fit.
    const ceiling = counted * 0.06 + 2 * 0.6 + 0.3;
    const result = await new RouteExecutor({ engine }).execute({ plan, messages, options: { maxTokens: 50, temperature: 0, seed: 1 }, maxJoules: ceiling });
    assert.equal(result.outcome, 'stopped_at_joule_ceiling');
    assert.equal(result.usage.promptTokens, counted);
    assert.ok(result.usage.completionTokens >= 1 && result.usage.completionTokens <= 2, String(result.usage.completionTokens));
    assert.equal(result.finishReason, 'length');
    assert.equal(result.route.billable_joules, result.route.estimated_joules, 'billed for the work, whatever the ceiling');
  });

  it('refuses before any work a prompt whose template and tools cannot fit the ceiling, on the engine\'s count (bytes ÷ 4 over message text would let it through)', async () => {
    const plan = planRoute(loadRouteConfig(), { model: 'svc-chat', plan: { enterprise: false } });
    const tools = [{ name: 'lookup', description: 'Looks a word up in the dictionary and explains it. '.repeat(40), parameters: { type: 'object', properties: { q: { type: 'string' } } } }];
    let generated = 0;
    for (const [what, options] of [
      ['the template alone', { maxTokens: 4 }],
      ['a long tool description', { maxTokens: 4, tools }],
    ] as const) {
      // 'hi' is 2 bytes: by the old estimate (1 + 4 tokens) it and a token cost 0.9 J, under 1 J.
      await assert.rejects(new RouteExecutor({ engine }).execute({
        plan, messages: [{ role: 'user', content: 'hi' }], options, maxJoules: what === 'the template alone' ? 1 : 20,
        onPart: () => { generated++; },
      }), (error: unknown) => {
        assert.ok(error instanceof RouteRefusedError, what);
        assert.equal(error.code, 'joule_ceiling_too_low');
        assert.match(error.message, /tokens as the engine counted it/);
        return true;
      });
    }
    assert.equal(generated, 0, 'nothing was generated');
  });

  it('a request waiting for the engine\'s only sequence is not metered while it waits: the energy read then is the running request\'s', async () => {
    const meter = RaplMeter.open(powercap);
    assert.ok(meter !== null);
    const executor = new RouteExecutor({ engine, meter });
    const plan = planRoute(loadRouteConfig(), { model: 'svc-chat', plan: { enterprise: false } });
    writeFileSync(join(powercap, 'intel-rapl:0', 'energy_uj'), '10000000\n');
    let bumped = false;
    // parallel: 1, so the second request waits for the first one's sequence; the counter moves
    // by 2 J while only the first is running.
    const [running, waiting] = await Promise.all([
      executor.execute({
        plan, messages: [{ role: 'user', content: 'Hi' }], options: { maxTokens: 4, temperature: 0, seed: 1 },
        onPart: () => {
          if (bumped) return;
          bumped = true;
          writeFileSync(join(powercap, 'intel-rapl:0', 'energy_uj'), '12000000\n');
        },
      }),
      executor.execute({ plan, messages: [{ role: 'user', content: 'Hello' }], options: { maxTokens: 4, temperature: 0, seed: 1 } }),
    ]);
    assert.equal(running.route.raw_joules, 2, 'all of it: the waiting request had no share');
    assert.equal(waiting.route.raw_joules, 0, 'nothing moved while it ran');
  });
});
