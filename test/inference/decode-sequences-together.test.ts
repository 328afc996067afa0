/**
 * Parallel sequences of one context decode together, and a request joining running streams
 * is not held until they finish. Real llama.cpp on the tiny fixture model; batches are
 * counted by watching the context's native `initBatch` calls (an internal of node-llama-cpp,
 * read here only to observe).
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { getLlama, LlamaChat, LlamaLogLevel, resolveChatWrapper, type ChatHistoryItem, type ChatWrapper, type Llama, type LlamaContext, type LlamaModel } from 'node-llama-cpp';
import { decodeSequencesTogether, sequenceIdOf } from '../../src/inference/decode-sequences-together.ts';
import { LlamaEngine } from '../../src/inference/llama-engine.ts';
import { ModelCatalog } from '../../src/inference/model-catalog.ts';
import { tinyModelPath } from '../helpers/daemon-process.ts';

let llama: Llama;
let model: LlamaModel;
let chatWrapper: ChatWrapper;

before(async () => {
  llama = await getLlama({ gpu: false, build: 'never', progressLogs: false, logLevel: LlamaLogLevel.error, maxThreads: 1 });
  model = await llama.loadModel({ modelPath: tinyModelPath() });
  chatWrapper = resolveChatWrapper(model);
});

after(async () => {
  await model.dispose();
  await llama.dispose();
});

/**
 * A context whose decode batches are recorded: sizes in tokens, and the sequence id of each
 * token in the order they were added.
 */
async function watchedContext(sequences: number): Promise<{ context: LlamaContext; batches: number[]; order: number[][] }> {
  const context = await model.createContext({ contextSize: 2048, sequences, threads: 1 });
  const batches: number[] = [];
  const order: number[][] = [];
  const internal = context as unknown as { _ctx: Record<string | symbol, unknown> };
  const native = internal._ctx;
  internal._ctx = new Proxy(native, {
    get(target, key) {
      const value = target[key];
      if (typeof value !== 'function') return value;
      if (key === 'initBatch') {
        return (size: number) => {
          batches.push(size);
          order.push([]);
          return (value as (n: number) => unknown).call(target, size);
        };
      }
      if (key === 'addToBatch') {
        return (sequenceId: number, first: number, tokens: Uint32Array, logits: Uint32Array) => {
          for (let i = 0; i < tokens.length; i++) order.at(-1)!.push(sequenceId);
          return (value as (...args: unknown[]) => unknown).call(target, sequenceId, first, tokens, logits);
        };
      }
      return (value as (...args: unknown[]) => unknown).bind(target);
    },
  });
  return { context, batches, order };
}

const ask = (text: string): ChatHistoryItem[] => [{ type: 'user', text }, { type: 'model', response: [] }];

test('four streams on one context decode every step as one batch of four, in sequence order', async () => {
  const { context, batches, order } = await watchedContext(4);
  try {
    assert.equal(decodeSequencesTogether(context), true);
    const chats = Array.from({ length: 4 }, () => new LlamaChat({ contextSequence: context.getSequence(), chatWrapper, autoDisposeSequence: false }));
    // Twice: the second round starts on sequences that hold the first round's tokens (erased
    // under the context lock first, as in the daemon, where sequences are reused).
    const ids = chats.map((chat) => sequenceIdOf(chat.sequence));
    assert.deepEqual([...ids].sort(), [0, 1, 2, 3]);
    for (let round = 0; round < 2; round++) {
      batches.length = 0;
      order.length = 0;
      const counts = [0, 0, 0, 0];
      // The same question on every sequence: greedy decoding gives the same, equally long replies.
      await Promise.all(chats.map((chat, i) => chat.generateResponse(ask('Tell me a story.'), {
        maxTokens: 48, temperature: 0, onToken: (tokens) => { counts[i]! += tokens.length; },
      })));
      const steps = counts[0]!;
      assert.ok(steps >= 8, `the fixture generated only ${steps} tokens`);
      assert.deepEqual(counts, [steps, steps, steps, steps]);
      // One batch for the four prompts, then one batch of four per generated token (the last
      // sampled token is not decoded); without decodeSequencesTogether node-llama-cpp 3.22.1
      // runs these as batches of 3 (~4/3 as many).
      const generation = batches.slice(1);
      assert.deepEqual(generation, Array.from({ length: steps - 1 }, () => 4), `batches: ${JSON.stringify(batches)}`);
      // Tokens in increasing sequence order, whatever order their sampling finished in:
      // llama.cpp decodes a batch of separate sequence caches in one pass per run of
      // consecutive ids (out of order, the same 4 tokens took ~1.6× as long).
      for (const ids of order.slice(1)) assert.deepEqual(ids, [0, 1, 2, 3]);
    }
    for (const chat of chats) chat.dispose();
  } finally {
    await context.dispose();
  }
});

test('a request joining three running streams starts within a few steps, not after them', async () => {
  const { context } = await watchedContext(4);
  try {
    decodeSequencesTogether(context);
    const chats = Array.from({ length: 4 }, () => new LlamaChat({ contextSequence: context.getSequence(), chatWrapper, autoDisposeSequence: false }));
    // Every sequence holds an earlier conversation, which the next request's LlamaChat erases.
    await Promise.all(chats.map((chat, i) => chat.generateResponse(ask(`Earlier question ${i}.`), { maxTokens: 4, temperature: 0 })));

    const runnerTokens = [0, 0, 0];
    let joined: Promise<unknown> | undefined;
    let runnersAtJoinerStart = -1;
    let runnersAtJoinerFirstToken = -1;
    const total = () => Math.min(...runnerTokens);
    const runners = [0, 1, 2].map((i) => chats[i]!.generateResponse(ask(`Runner ${i}, write at length.`), {
      maxTokens: 160,
      temperature: 0,
      onToken: (tokens) => {
        runnerTokens[i]! += tokens.length;
        if (joined === undefined && total() >= 8) {
          runnersAtJoinerStart = total();
          joined = chats[3]!.generateResponse(ask('A different question from a new client.'), {
            maxTokens: 8,
            temperature: 0,
            onToken: () => { if (runnersAtJoinerFirstToken < 0) runnersAtJoinerFirstToken = total(); },
          });
        }
      },
    }));
    await Promise.all(runners);
    await joined;
    assert.ok(total() >= 100, `the runners generated only ${total()} tokens each; the test needs them to outlast the joiner`);
    assert.ok(runnersAtJoinerFirstToken >= 0, 'the joiner produced no token');
    // Erase, prompt and first token take a few decode steps; node-llama-cpp 3.22.1 without
    // decodeSequencesTogether holds the joiner's erase until every runner has finished.
    assert.ok(runnersAtJoinerFirstToken - runnersAtJoinerStart <= 6,
      `joiner started when runners had ${runnersAtJoinerStart} tokens and got its first token at ${runnersAtJoinerFirstToken} (of ${total()})`);
    for (const chat of chats) chat.dispose();
  } finally {
    await context.dispose();
  }
});

test('the engine installs it: a chat arriving while three stream gets text before they finish', async () => {
  const catalog = await ModelCatalog.load([{ id: 'tiny', path: tinyModelPath() }]);
  const quiet = { info() {}, warn() {}, debug() {} };
  const warnings: string[] = [];
  const engine = new LlamaEngine(catalog, {
    parallel: 4, queueSize: 8, defaultMaxTokens: 16, keepAliveMs: Number.POSITIVE_INFINITY, gpu: 'cpu', threads: 1, contextSize: 2048,
    log: { ...quiet, warn: (_obj, msg) => { warnings.push(msg); } },
  });
  try {
    const host = engine.model('tiny')!;
    // Fill every pooled sequence with an earlier conversation first.
    await Promise.all([0, 1, 2, 3].map((i) => host.chat([{ role: 'user', content: `Earlier ${i}` }], { maxTokens: 4, temperature: 0 })));
    const texts = [0, 0, 0];
    let joiner: Promise<unknown> | undefined;
    let atStart = -1;
    let atFirstText = -1;
    const least = () => Math.min(...texts);
    const runners = [0, 1, 2].map((i) => host.chat([{ role: 'user', content: `Runner ${i}, write at length.` }], {
      maxTokens: 160,
      temperature: 0,
      onPart: () => {
        texts[i]!++;
        if (joiner === undefined && least() >= 8) {
          atStart = least();
          joiner = host.chat([{ role: 'user', content: 'A new client asks something else.' }], {
            maxTokens: 8, temperature: 0, onPart: () => { if (atFirstText < 0) atFirstText = least(); },
          });
        }
      },
    }));
    const results = await Promise.all(runners);
    await joiner;
    assert.deepEqual(warnings, []);
    assert.ok(results.every((r) => r.finishReason === 'length'), 'the runners stopped before max_tokens; the test needs them to outlast the joiner');
    assert.ok(atFirstText >= 0, 'the joiner produced no text');
    assert.ok(atFirstText - atStart <= 8, `joiner started at ${atStart} runner chunks, first text at ${atFirstText} (of ${least()})`);
  } finally {
    await engine.close();
  }
});
