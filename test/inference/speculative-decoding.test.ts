/**
 * Speculative decoding on the real engine with the fixture model: at temperature 0 a reply is
 * the same with prompt lookup, with a draft model (a layer-truncated copy of the fixture: same
 * vocabulary) and without either, for chat and completion, streamed and not, with stop
 * sequences and a response format; predictions really happen (the engine logs their count);
 * usage counts the reply's tokens, not the guesses; vocabularies are compared token by token.
 * On a constructed "cycle" model (greedy output is a fixed word cycle, tiny-gguf.ts) the guesses
 * come true, so the comparison is also made where speculation does its work.
 */
import assert from 'node:assert/strict';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { LlamaEngine } from '../../src/inference/llama-engine.ts';
import type { SpeculativeSettings } from '../../src/inference/llama-engine-options.ts';
import type { ChatOptions, GenerateResult, LanguageModel } from '../../src/inference/language-model.ts';
import { ModelCatalog } from '../../src/inference/model-catalog.ts';
import { vocabularyMismatch } from '../../src/inference/speculative-decoding.ts';
import { tinyModelPath } from '../helpers/daemon-process.ts';
import { tinyCycle, writeTinyGguf } from '../helpers/tiny-gguf.ts';

/** The fixture's first block only: its embeddings, vocabulary and output layer. */
const draftPath = (): string => writeTinyGguf(join(tmpdir(), 'svc-test-fixtures', 'tiny-draft-k1-v1.gguf'), { keepBlocks: 1 });

interface Recorded { engine: LlamaEngine; model: LanguageModel; predictions: { validated: number; refuted: number }; warnings: string[] }

async function engineWith(speculative: SpeculativeSettings, modelPath = tinyModelPath()): Promise<Recorded> {
  const catalog = await ModelCatalog.load([{ id: 'tiny', path: modelPath }]);
  const predictions = { validated: 0, refuted: 0 };
  const warnings: string[] = [];
  const engine = new LlamaEngine(catalog, {
    parallel: 2, queueSize: 4, defaultMaxTokens: 16, keepAliveMs: Number.POSITIVE_INFINITY, gpu: 'cpu', threads: 1, contextSize: 2048, speculative,
    log: {
      info() {},
      warn: (_obj, msg) => { warnings.push(msg); },
      debug: (obj, msg) => {
        if (msg !== 'token predictions') return;
        const counts = obj as { validated: number; refuted: number };
        predictions.validated += counts.validated;
        predictions.refuted += counts.refuted;
      },
    },
  });
  return { engine, model: engine.model('tiny')!, predictions, warnings };
}

// Repetitive text, so the prompt holds n-grams for lookup to find.
const TEXT = 'the cat sat on the mat and the dog sat on the log and the cat sat on the mat and the dog sat on the log';
const greedy = { temperature: 0, maxTokens: 48 } as const;

/** The reply's text and finish, streamed or not; streamed, the deltas must add up to the text. */
async function reply(model: LanguageModel, kind: 'chat' | 'complete', options: ChatOptions, stream: boolean): Promise<Pick<GenerateResult, 'text' | 'finishReason' | 'usage'>> {
  let streamed = '';
  const withStream = stream ? { ...options, onPart: (part: { type: string; text?: string }) => { if (part.type === 'text-delta') streamed += part.text ?? ''; } } : options;
  const result = kind === 'chat'
    ? await model.chat([{ role: 'user', content: `Repeat: ${TEXT}` }], withStream)
    : await model.complete(`${TEXT} and the`, withStream);
  if (stream) assert.equal(streamed, result.text);
  return { text: result.text, finishReason: result.finishReason, usage: result.usage };
}

const CASES: [string, 'chat' | 'complete', ChatOptions][] = [
  ['chat', 'chat', greedy],
  ['completion', 'complete', greedy],
  ['chat with a stop sequence', 'chat', { ...greedy, stop: [' the'] }],
  ['completion with a stop sequence', 'complete', { ...greedy, stop: [' the'] }],
  ['chat with a response format', 'chat', {
    ...greedy, maxTokens: 64,
    responseFormat: { type: 'json_schema', name: 'pet', strict: true, schema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'], additionalProperties: false } },
  }],
];

test('at temperature 0, replies are the same with prompt lookup, a draft model and neither', async (t) => {
  const off = await engineWith({ mode: 'off' });
  const lookup = await engineWith({ mode: 'lookup' });
  const draft = await engineWith({ mode: 'draft', draftModelPath: draftPath() });
  t.after(() => Promise.all([off.engine.close(), lookup.engine.close(), draft.engine.close()]));
  for (const [name, kind, options] of CASES) {
    for (const stream of [false, true]) {
      const expected = await reply(off.model, kind, options, stream);
      assert.ok(expected.text.length > 0, name);
      for (const [mode, side] of [['lookup', lookup], ['draft', draft]] as const) {
        assert.deepEqual(await reply(side.model, kind, options, stream), expected, `${name}, ${stream ? 'streamed' : 'not streamed'}, ${mode}`);
      }
    }
  }
  // The comparison means something only if guesses were made and checked.
  for (const [mode, side] of [['lookup', lookup], ['draft', draft]] as const) {
    assert.ok(side.predictions.validated + side.predictions.refuted > 0, `${mode} made predictions: ${JSON.stringify(side.predictions)}`);
  }
  assert.deepEqual(off.predictions, { validated: 0, refuted: 0 });
  assert.deepEqual(draft.warnings, []);
});

test('a draft of another shape but the same vocabulary drafts; vocabularies are compared token by token', async (t) => {
  const other = writeTinyGguf(join(tmpdir(), 'svc-test-fixtures', 'tiny-embedder-as-draft-v1.gguf'), { embedding: 32, blocks: 1, heads: 2, name: 'other' });
  const side = await engineWith({ mode: 'draft', draftModelPath: other });
  t.after(() => side.engine.close());
  // The fixture generator has one vocabulary, so the mismatch is shown on the facts themselves,
  // and a same-vocabulary draft of another shape is accepted.
  const reply1 = await side.model.complete('the cat', greedy);
  assert.equal(reply1.usage.completionTokens, 48);
  assert.deepEqual(side.warnings, []);
  const tokens = ['<unk>', '<s>', '</s>', 'a'];
  assert.equal(vocabularyMismatch({ tokens, bos: 1, eos: 2 }, { tokens, bos: 1, eos: 2 }), undefined);
  assert.match(vocabularyMismatch({ tokens, bos: 1, eos: 2 }, { tokens: [...tokens, 'b'], bos: 1, eos: 2 })!, /differ in size \(4 and 5 tokens\)/);
  assert.match(vocabularyMismatch({ tokens, bos: 1, eos: 2 }, { tokens: ['<unk>', '<s>', '</s>', 'b'], bos: 1, eos: 2 })!, /token 3 differs \("a" and "b"\)/);
  assert.match(vocabularyMismatch({ tokens, bos: 1, eos: 2 }, { tokens, bos: 1, eos: 0 })!, /end-of-text/);
});

test('usage counts the reply\'s tokens, not guesses the model refuted', async (t) => {
  const lookup = await engineWith({ mode: 'lookup' });
  t.after(() => lookup.engine.close());
  const result = await lookup.model.complete(`${TEXT} and the`, greedy);
  assert.equal(result.finishReason, 'length');
  assert.equal(result.usage.completionTokens, 48);
  assert.ok(lookup.predictions.refuted > 0, 'some guesses were refuted, so the meter alone would overcount');
});

test('on a model whose greedy output is a word cycle, prompt lookup and a smaller draft guess right, and the reply is the same', async (t) => {
  const fixtures = join(tmpdir(), 'svc-test-fixtures');
  const target = writeTinyGguf(join(fixtures, 'tiny-cycle-v1.gguf'), { cycle: true, name: 'cycle' });
  // Another size and seed, so other weights: it agrees with the target only through the cycle.
  const smallDraft = writeTinyGguf(join(fixtures, 'tiny-cycle-32x1-v1.gguf'), { cycle: true, embedding: 32, blocks: 1, heads: 2, seed: 99, name: 'cycle-draft' });
  const off = await engineWith({ mode: 'off' }, target);
  const lookup = await engineWith({ mode: 'lookup' }, target);
  const draft = await engineWith({ mode: 'draft', draftModelPath: smallDraft }, target);
  t.after(() => Promise.all([off.engine.close(), lookup.engine.close(), draft.engine.close()]));
  const words = tinyCycle();
  const prompt = words.join(' ');
  const expected = await off.model.complete(prompt, greedy);
  // The construction holds: the model continues the cycle from where the prompt left it.
  assert.equal(expected.text.trim(), Array.from({ length: greedy.maxTokens }, (_, i) => words[i % words.length]).join(' '));
  for (const [mode, side] of [['lookup', lookup], ['draft', draft]] as const) {
    const result = await side.model.complete(prompt, greedy);
    assert.deepEqual({ text: result.text, usage: result.usage }, { text: expected.text, usage: expected.usage }, mode);
    // node-llama-cpp 3.22 keeps at most one validated guess per batch (docs/BENCHMARKS.md), so up
    // to about half the reply's tokens come from guesses; on the random fixture it is ~5%.
    assert.ok(side.predictions.validated >= greedy.maxTokens / 3, `${mode}: ${JSON.stringify(side.predictions)}`);
  }
  assert.deepEqual(draft.warnings, []);
});
