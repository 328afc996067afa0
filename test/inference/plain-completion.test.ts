/**
 * svc's own plain-completion loop against node-llama-cpp's LlamaCompletion, in this process on
 * the fixture models: the same tokens for the same options (it replaces LlamaCompletion, so
 * sampling must not change), and on the byte-characters variant, the text of exactly the first
 * `maxTokens` tokens wherever the limit falls.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { LlamaCompletion, type Token } from 'node-llama-cpp';
import { engineSampling } from '../../src/inference/llama-sampling.ts';
import { completionPromptTokens, generatePlainCompletion } from '../../src/inference/plain-completion.ts';
import { byteCharactersModelPath } from '../helpers/daemon-process.ts';
import { disposeTinyLlama, loadTinyLlama, type TinyLlama } from '../helpers/tiny-llama.ts';

const PROMPT = 'Once upon a time';
const SAMPLINGS = [
  { temperature: 0 },
  { temperature: 1, seed: 3 },
  { temperature: 0.9, seed: 7, topK: 5, minP: 0.05 },
  { temperature: 1, seed: 11, repeatPenalty: 1.3, frequencyPenalty: 0.5, presencePenalty: 0.4, repeatLastN: 16 },
];

/** LlamaCompletion's tokens and text for `options` on a fresh state of the context's sequence. */
async function reference(tiny: TinyLlama, options: ReturnType<typeof engineSampling>): Promise<{ tokens: Token[]; text: string }> {
  const sequence = tiny.context.getSequence();
  const completion = new LlamaCompletion({ contextSequence: sequence, autoDisposeSequence: true });
  const tokens: Token[] = [];
  try {
    const text = await completion.generateCompletion(PROMPT, { ...options, onToken: (t) => tokens.push(...t) });
    return { tokens, text };
  } finally {
    completion.dispose();
  }
}

async function ours(tiny: TinyLlama, options: ReturnType<typeof engineSampling>, chunks: string[] = []): Promise<Awaited<ReturnType<typeof generatePlainCompletion>>> {
  const sequence = tiny.context.getSequence();
  try {
    return await generatePlainCompletion(sequence, completionPromptTokens(tiny.model, PROMPT), { ...options, onTextChunk: (c) => chunks.push(c) });
  } finally {
    sequence.dispose();
  }
}

describe('on the plain fixture model', () => {
  let tiny: TinyLlama;
  before(async () => {
    tiny = await loadTinyLlama(512);
  });
  after(() => disposeTinyLlama(tiny));

  test('the same text as LlamaCompletion for the same sampling options, penalties included', async () => {
    for (const sampling of SAMPLINGS) {
      const options = engineSampling(sampling, 48);
      const expected = await reference(tiny, options);
      const chunks: string[] = [];
      const got = await ours(tiny, options, chunks);
      assert.equal(got.text, expected.text, JSON.stringify(sampling));
      assert.equal(chunks.join(''), got.text, 'the chunks are the text');
      assert.equal(got.stopReason, expected.tokens.length >= 48 ? 'maxTokens' : 'eogToken');
    }
  });

  test('a sequence that holds the prompt already generates the same reply', async () => {
    const sequence = tiny.context.getSequence();
    try {
      const prompt = completionPromptTokens(tiny.model, PROMPT);
      const options = engineSampling({ temperature: 0 }, 12);
      const first = await generatePlainCompletion(sequence, prompt, options);
      const second = await generatePlainCompletion(sequence, prompt, options);
      assert.equal(second.text, first.text);
      assert.notEqual(first.text, '');
    } finally {
      sequence.dispose();
    }
  });

  test('an aborted signal ends it with what was released, as an abort', async () => {
    const controller = new AbortController();
    const chunks: string[] = [];
    const sequence = tiny.context.getSequence();
    try {
      const options = { ...engineSampling({ temperature: 0 }, 200), signal: controller.signal, onTextChunk: (c: string) => { chunks.push(c); if (chunks.length === 3) controller.abort(); } };
      const result = await generatePlainCompletion(sequence, completionPromptTokens(tiny.model, PROMPT), options);
      assert.equal(result.stopReason, 'abort');
      assert.equal(result.text, chunks.join(''));
      assert.equal(chunks.length, 3);
    } finally {
      sequence.dispose();
    }
  });
});

describe('on the byte-characters model (é, € and 😀 one token per UTF-8 byte)', () => {
  let tiny: TinyLlama;
  before(async () => {
    tiny = await loadTinyLlama(512, byteCharactersModelPath());
  });
  after(() => disposeTinyLlama(tiny));

  test('every limit: the complete characters of exactly that many tokens, streamed as returned', async () => {
    let inside = 0;
    for (const sampling of SAMPLINGS.slice(1, 3)) {
      // LlamaCompletion's own tokens (not its text, which is what svc had to fix).
      const { tokens } = await reference(tiny, engineSampling(sampling, 40));
      const all = tiny.model.detokenize(tokens);
      for (let k = 1; k <= Math.min(30, tokens.length - 1); k++) {
        const whole = tiny.model.detokenize(tokens.slice(0, k));
        const expected = whole.endsWith('\uFFFD') ? commonPrefix(whole, all) : whole;
        if (expected !== whole) inside++;
        const chunks: string[] = [];
        const got = await ours(tiny, engineSampling(sampling, k), chunks);
        assert.deepEqual([got.text, got.stopReason], [expected, 'maxTokens'], `k ${k}, ${JSON.stringify(sampling)}`);
        assert.equal(chunks.join(''), got.text);
        assert.ok(!got.text.includes('\uFFFD'));
      }
    }
    assert.ok(inside >= 3, `${inside} limits inside a character`);
  });
});

function commonPrefix(a: string, b: string): string {
  let i = 0;
  while (i < a.length && a[i] === b[i]) i++;
  if (i > 0 && a.charCodeAt(i - 1) >= 0xd800 && a.charCodeAt(i - 1) <= 0xdbff) i--;
  return a.slice(0, i);
}
