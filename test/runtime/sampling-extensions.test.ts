/**
 * llama.cpp's and Ollama's sampling fields on chat and completions: accepted within their
 * ranges and honoured by the engine (each test compares against a run whose outcome is known
 * without the field), or refused with a 400 that says why when node-llama-cpp has no sampler
 * for them (typical_p, mirostat) — never silently ignored.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { startDaemon, type DaemonProcess } from '../helpers/daemon-process.ts';

let daemon: DaemonProcess;
before(async () => {
  daemon = await startDaemon();
});
after(async () => {
  assert.equal(await daemon.stop(), 0);
});

const endpoints = [
  { path: 'chat/completions', body: { model: 'tiny', messages: [{ role: 'user', content: 'tell me a story' }] } },
  { path: 'completions', body: { model: 'tiny', prompt: 'Once upon a time' } },
];

interface Answer {
  choices?: { message?: { content: string }; text?: string }[];
  error?: { type: string; code: string; param: string | null; message: string };
}

async function post(path: string, body: Record<string, unknown>): Promise<{ status: number; json: Answer }> {
  const res = await fetch(`${daemon.url}/v1/${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.status, json: (await res.json()) as Answer };
}

async function text(path: string, body: Record<string, unknown>): Promise<string> {
  const { status, json } = await post(path, body);
  assert.equal(status, 200, JSON.stringify(json));
  const choice = json.choices![0]!;
  return choice.message?.content ?? choice.text ?? '';
}

for (const { path, body } of endpoints) {
  describe(path, () => {
    const greedy = () => text(path, { ...body, max_tokens: 24, temperature: 0 });

    test('top_k 1 and min_p 1 leave only the most likely token: sampling at temperature 1.5 gives the greedy reply', async () => {
      const expected = await greedy();
      const seeds = [1, 2, 3];
      const free = await Promise.all(seeds.map((seed) => text(path, { ...body, max_tokens: 24, temperature: 1.5, seed })));
      // Without the restriction, sampling at 1.5 departs from the greedy reply (the fixture's
      // weights are random, so its distribution is flat).
      assert.ok(free.some((t) => t !== expected), 'temperature 1.5 should not be greedy');
      for (const seed of seeds) {
        assert.equal(await text(path, { ...body, max_tokens: 24, temperature: 1.5, seed, top_k: 1 }), expected, `top_k 1, seed ${seed}`);
        assert.equal(await text(path, { ...body, max_tokens: 24, temperature: 1.5, seed, min_p: 1 }), expected, `min_p 1, seed ${seed}`);
      }
      // top_k 0 is "off" (the whole vocabulary), as in llama.cpp.
      assert.equal(await text(path, { ...body, max_tokens: 24, temperature: 1.5, seed: 1, top_k: 0 }), await text(path, { ...body, max_tokens: 24, temperature: 1.5, seed: 1, top_k: 1_000_000 }));
    });

    test('repeat_penalty changes a greedy reply; repeat_last_n 0 turns it off; 1 is neutral', async () => {
      const expected = await greedy();
      const penalized = await text(path, { ...body, max_tokens: 24, temperature: 0, repeat_penalty: 10, repeat_last_n: -1 });
      assert.notEqual(penalized, expected, 'a strong repeat penalty should change what greedy decoding repeats');
      assert.equal(await text(path, { ...body, max_tokens: 24, temperature: 0, repeat_penalty: 10, repeat_last_n: 0 }), expected);
      assert.equal(await text(path, { ...body, max_tokens: 24, temperature: 0, repeat_penalty: 1 }), expected);
    });

    test('a huge repeat_last_n costs no memory: it is bounded by max_tokens (llama.cpp allocates that many tokens up front)', async () => {
      const peak = () => Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${daemon.child.pid}/status`, 'utf8'))?.[1]) * 1024;
      await greedy();
      const before = peak();
      // 100M tokens would be a 400 MB buffer.
      await text(path, { ...body, max_tokens: 8, temperature: 0, repeat_penalty: 1.1, repeat_last_n: 100_000_000 });
      const grown = peak() - before;
      assert.ok(grown < 100 * 1024 * 1024, `peak RSS grew ${(grown / 1024 / 1024).toFixed(0)} MB`);
    });

    test('typical_p and mirostat are accepted at their neutral values, refused otherwise with the reason', async () => {
      const expected = await greedy();
      assert.equal(await text(path, { ...body, max_tokens: 24, temperature: 0, typical_p: 1, mirostat: 0, mirostat_tau: 5, mirostat_eta: 0.1 }), expected);
      for (const [field, value] of [['typical_p', 0.5], ['mirostat', 2]] as const) {
        const { status, json } = await post(path, { ...body, max_tokens: 4, [field]: value });
        assert.equal(status, 400);
        assert.equal(json.error?.code, 'unsupported_value');
        assert.equal(json.error.param, field);
        assert.match(json.error.message, /not available.*node-llama-cpp/);
      }
    });

    test('out-of-range values are 400 naming the field', async () => {
      const cases: [string, unknown][] = [
        ['top_k', -1], ['top_k', 1.5], ['min_p', 1.5], ['min_p', -0.1], ['repeat_penalty', 0], ['repeat_penalty', -1],
        ['repeat_last_n', -2], ['typical_p', 2], ['mirostat', 3], ['mirostat_tau', -1], ['top_k', 'many'],
      ];
      for (const [field, value] of cases) {
        const { status, json } = await post(path, { ...body, max_tokens: 4, [field]: value });
        assert.equal(status, 400, `${field}=${String(value)}`);
        assert.equal(json.error?.type, 'invalid_request_error');
        assert.equal(json.error.param, field, `${field}=${String(value)}: ${JSON.stringify(json)}`);
      }
    });
  });
}
