/**
 * usage.completion_tokens counts every token the model generated: exactly max_tokens when
 * finish_reason is "length", on chat and completions, streamed and not — including tokens whose
 * text is held back because it might begin a stop sequence (counting the tokens handed to
 * onToken reported 0 for max_tokens 1 there, and 126 for 128).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startDaemon, type DaemonProcess } from '../helpers/daemon-process.ts';

let daemon: DaemonProcess;
before(async () => {
  daemon = await startDaemon();
});
after(async () => {
  assert.equal(await daemon.stop(), 0);
});

interface Outcome {
  text: string;
  finish: string | null;
  completionTokens: number;
}

async function generate(path: 'chat/completions' | 'completions', body: Record<string, unknown>, stream: boolean): Promise<Outcome> {
  const res = await fetch(`${daemon.url}/v1/${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ ...body, ...(stream ? { stream: true, stream_options: { include_usage: true } } : {}) }),
  });
  assert.equal(res.status, 200, await res.clone().text());
  if (!stream) {
    const json = (await res.json()) as { choices: { message?: { content: string }; text?: string; finish_reason: string }[]; usage: { completion_tokens: number } };
    const choice = json.choices[0]!;
    return { text: choice.message?.content ?? choice.text ?? '', finish: choice.finish_reason, completionTokens: json.usage.completion_tokens };
  }
  const outcome: Outcome = { text: '', finish: null, completionTokens: -1 };
  for (const event of (await res.text()).split('\n\n')) {
    if (!event.startsWith('data: {')) continue;
    const chunk = JSON.parse(event.slice(6)) as { choices: { delta?: { content?: string }; text?: string; finish_reason: string | null }[]; usage?: { completion_tokens: number } };
    for (const c of chunk.choices) {
      outcome.text += c.delta?.content ?? c.text ?? '';
      if (c.finish_reason !== null) outcome.finish = c.finish_reason;
    }
    if (chunk.usage) outcome.completionTokens = chunk.usage.completion_tokens;
  }
  return outcome;
}

const endpoints = [
  { path: 'chat/completions' as const, body: { model: 'tiny', messages: [{ role: 'user', content: 'count with me' }] } },
  { path: 'completions' as const, body: { model: 'tiny', prompt: 'Once upon a time' } },
];

describe('completion_tokens equals max_tokens when finish_reason is length', () => {
  for (const { path, body } of endpoints) {
    for (const stream of [false, true]) {
      test(`${path}, ${stream ? 'streamed' : 'whole'}: max_tokens 1, 2, 128`, async () => {
        for (const maxTokens of [1, 2, 128]) {
          for (const sampling of [{ temperature: 0 }, { temperature: 1, seed: 7 }]) {
            const out = await generate(path, { ...body, ...sampling, max_tokens: maxTokens }, stream);
            assert.equal(out.finish, 'length', `max_tokens ${maxTokens}: ${JSON.stringify(out)}`);
            assert.equal(out.completionTokens, maxTokens, `max_tokens ${maxTokens}, ${JSON.stringify(sampling)}`);
          }
        }
      });
    }
  }
});

describe('tokens held back by a stop sequence that never completes still count', () => {
  for (const { path, body } of endpoints) {
    for (const stream of [false, true]) {
      test(`${path}, ${stream ? 'streamed' : 'whole'}`, async () => {
        for (const maxTokens of [1, 2, 8]) {
          const plain = await generate(path, { ...body, temperature: 0, max_tokens: maxTokens }, stream);
          assert.notEqual(plain.text, '');
          // A stop sequence that the whole reply so far is a prefix of: every token's text is held
          // back while it might still match, and released when generation ends at max_tokens.
          const held = await generate(path, { ...body, temperature: 0, max_tokens: maxTokens, stop: [`${plain.text}\u0007never`] }, stream);
          assert.equal(held.finish, 'length');
          assert.equal(held.completionTokens, maxTokens, `max_tokens ${maxTokens}: ${JSON.stringify(held)}`);
        }
      });
    }
  }
});

// Found by the test above: node-llama-cpp 3.22 drops the text it holds back for a partial stop
// match when max_tokens ends the generation, so replies lost their last characters. svc matches
// stop sequences itself (stop-sequence-matcher.ts) and releases held-back text at the end.
describe('text held back by a stop sequence that never completes is returned', () => {
  for (const { path, body } of endpoints) {
    for (const stream of [false, true]) {
      test(`${path}, ${stream ? 'streamed' : 'whole'}: the reply equals the one without the stop sequence`, async () => {
        for (const maxTokens of [1, 4, 16]) {
          for (const sampling of [{ temperature: 0 }, { temperature: 1, seed: 3 }]) {
            const plain = await generate(path, { ...body, ...sampling, max_tokens: maxTokens }, stream);
            assert.equal(plain.finish, 'length');
            // Stops that the end of the reply begins: the last character, the last few, the whole reply.
            for (const tail of [plain.text.slice(-1), plain.text.slice(-3), plain.text]) {
              const held = await generate(path, { ...body, ...sampling, max_tokens: maxTokens, stop: [`${tail}\u0007never`, '\u0007'] }, stream);
              assert.equal(held.text, plain.text, `max_tokens ${maxTokens}, stop ${JSON.stringify(tail)}…`);
              assert.equal(held.finish, 'length');
            }
          }
        }
      });
    }
  }
});

describe('a stop sequence cuts the reply exactly where it first matches', () => {
  for (const { path, body } of endpoints) {
    for (const stream of [false, true]) {
      test(`${path}, ${stream ? 'streamed' : 'whole'}: text up to the match, finish stop`, async () => {
        for (const seed of [1, 2, 3]) {
          const sampling = { temperature: 1, seed, max_tokens: 24 };
          const plain = await generate(path, { ...body, ...sampling }, stream);
          assert.ok(plain.text.length >= 6, JSON.stringify(plain));
          // A stop that spans tokens (a slice of the middle of the reply), and one that starts at its first character.
          for (const stop of [plain.text.slice(Math.floor(plain.text.length / 2), Math.floor(plain.text.length / 2) + 3), plain.text.slice(0, 2)]) {
            const cut = await generate(path, { ...body, ...sampling, stop: [stop] }, stream);
            assert.equal(cut.text, plain.text.slice(0, plain.text.indexOf(stop)), `stop ${JSON.stringify(stop)} in ${JSON.stringify(plain.text)}`);
            assert.equal(cut.finish, 'stop');
          }
        }
      });
    }
  }
});
