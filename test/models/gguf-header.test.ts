import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import fc from 'fast-check';
import { GgufFormatError, quantizationName, readGgufSummary } from '../../src/models/gguf-header.ts';
import { modelCapabilities, parameterSize } from '../../src/models/model-capabilities.ts';
import { buildGgufFixture } from '../helpers/gguf-fixtures.ts';
import { tinyModelPath } from '../helpers/daemon-process.ts';

const dir = mkdtempSync(join(tmpdir(), 'svc-gguf-'));
let n = 0;
const file = (bytes: Buffer | string): string => {
  const path = join(dir, `f${n++}.gguf`);
  writeFileSync(path, bytes);
  return path;
};

test('the tiny model: what node-llama-cpp\'s own GGUF parser reads, we read', async () => {
  const path = tinyModelPath();
  const ours = await readGgufSummary(path);
  const { readGgufFileInfo } = await import('node-llama-cpp');
  const theirs = await readGgufFileInfo(path);
  const general = theirs.metadata.general;
  assert.equal(ours.architecture, general.architecture);
  assert.equal(ours.name, general.name);
  assert.equal(ours.fileType, general.file_type);
  assert.equal(ours.quantization, 'F32');
  const llama = (theirs.metadata as unknown as { llama: { context_length: number; embedding_length: number } }).llama;
  assert.equal(ours.contextLength, llama.context_length);
  assert.equal(ours.embeddingLength, llama.embedding_length);
  assert.equal(ours.tensorCount, theirs.tensorInfo?.length);
  const elements = (theirs.tensorInfo ?? []).reduce((sum, t) => sum + t.dimensions.reduce((a: number, b) => a * Number(b), 1), 0);
  assert.equal(ours.parameterCount, elements);
  assert.equal(ours.hasChatTemplate, true);
  assert.equal(ours.version, 3);
  assert.deepEqual(modelCapabilities(ours), ['chat']);
});

test('keys after a 150k-entry vocabulary and 150k merges are found', async () => {
  const path = file(buildGgufFixture({
    architecture: 'qwen2', vocabSize: 151_936, merges: 151_387, chatTemplate: '{{ messages }}', fileType: 15,
    contextLength: 32_768, embeddingLength: 3584, sizeLabel: '7B',
    // Keys a writer puts after the tokenizer are read too: the reader walks the whole section.
    extra: [['qwen2.rope.freq_base', { t: 'f32', v: 1e6 }], ['split.count', { t: 'u16', v: 1 }]],
  }));
  const summary = await readGgufSummary(path);
  assert.equal(summary.architecture, 'qwen2');
  assert.equal(summary.quantization, 'Q4_K_M');
  assert.equal(summary.contextLength, 32_768);
  assert.equal(summary.embeddingLength, 3584);
  assert.equal(summary.sizeLabel, '7B');
  assert.equal(summary.hasChatTemplate, true);
  assert.equal(summary.split, null, 'split.count 1 is not a split model');
  assert.equal(summary.parameterCount, 32);
});

test('file types map to llama.cpp\'s names', () => {
  assert.equal(quantizationName(0), 'F32');
  assert.equal(quantizationName(1), 'F16');
  assert.equal(quantizationName(2), 'Q4_0');
  assert.equal(quantizationName(7), 'Q8_0');
  assert.equal(quantizationName(15), 'Q4_K_M');
  assert.equal(quantizationName(18), 'Q6_K');
  assert.equal(quantizationName(30), 'IQ4_XS');
  assert.equal(quantizationName(32), 'BF16');
  assert.equal(quantizationName(38), 'MXFP4_MOE');
  assert.equal(quantizationName(1024), null);
  assert.equal(quantizationName(null), null);
});

test('an encoder with pooling: embeddings; a decoder without template: chat; a reranker: rerank only', async () => {
  const bert = await readGgufSummary(file(buildGgufFixture({ architecture: 'nomic-bert', poolingType: 1, contextLength: 2048, embeddingLength: 768 })));
  assert.equal(bert.poolingType, 1);
  assert.deepEqual(modelCapabilities(bert), ['embeddings']);
  const noncausal = await readGgufSummary(file(buildGgufFixture({ architecture: 'someencoder', causal: false })));
  assert.equal(noncausal.causalAttention, false);
  assert.deepEqual(modelCapabilities(noncausal), ['embeddings']);
  const decoder = await readGgufSummary(file(buildGgufFixture({ architecture: 'llama' })));
  assert.deepEqual(modelCapabilities(decoder), ['chat']);
  const qwenEmbed = await readGgufSummary(file(buildGgufFixture({ architecture: 'qwen3', poolingType: 3, chatTemplate: 'x' })));
  assert.deepEqual(modelCapabilities(qwenEmbed), ['chat', 'embeddings']);
  const reranker = await readGgufSummary(file(buildGgufFixture({ architecture: 'bert', poolingType: 4 })));
  assert.deepEqual(modelCapabilities(reranker), ['rerank']);
});

test('parameter size: the size label, else counted like Ollama', async () => {
  const labelled = await readGgufSummary(file(buildGgufFixture({ sizeLabel: '8x7B' })));
  assert.equal(parameterSize(labelled), '8x7B');
  const counted = await readGgufSummary(file(buildGgufFixture({ tensors: [{ name: 'a', dims: [1000, 1500] }] })));
  assert.equal(counted.parameterCount, 1_500_000);
  assert.equal(parameterSize(counted), '1.50M');
  assert.equal(parameterSize(counted, 8_030_261_248), '8.0B');
  assert.equal(parameterSize(counted, 2_000_000_000), '2B');
});

test('split keys are read', async () => {
  const part = await readGgufSummary(file(buildGgufFixture({ split: { no: 0, count: 3 } })));
  assert.deepEqual(part.split, { no: 0, count: 3 });
});

const rejects = async (path: string, pattern: RegExp) => {
  await assert.rejects(readGgufSummary(path), (error: unknown) => {
    assert.ok(error instanceof GgufFormatError, `expected GgufFormatError, got ${String(error)}`);
    assert.match(error.message, pattern);
    return true;
  });
};

test('non-GGUF, empty, old, big-endian and truncated files are GgufFormatErrors', async () => {
  await rejects(file('hello, this is text'), /not a GGUF file/);
  await rejects(file(''), /not a GGUF file \(0 bytes\)/);
  const valid = buildGgufFixture({ vocabSize: 1000, chatTemplate: 'x' });
  const v1 = Buffer.from(valid);
  v1.writeUInt32LE(1, 4);
  await rejects(file(v1), /v1/);
  const bigEndian = Buffer.from(valid);
  bigEndian.writeUInt32BE(3, 4);
  await rejects(file(bigEndian), /big-endian/);
  // Cut inside the key/value section, inside the tensor infos, and inside the tensor data.
  const kvEnd = valid.indexOf('token_embd.weight');
  for (const cut of [6, 20, 100, 5000, kvEnd + 5, valid.length - 1]) {
    await rejects(file(valid.subarray(0, cut)), /truncated/);
  }
});

test('hostile lengths and types are refused without allocating or looping on them', async () => {
  const valid = buildGgufFixture({ name: 'x' });
  // The first key's length (u64 at byte 24) set to 2^40: out of range, refused at once.
  const longKey = Buffer.from(valid);
  longKey.writeBigUInt64LE(1n << 40n, 24);
  await rejects(file(longKey), /out of range|bytes long/);
  // A tensor count far beyond what the file could hold.
  const manyTensors = Buffer.from(valid);
  manyTensors.writeBigUInt64LE(1n << 40n, 8);
  await rejects(file(manyTensors), /cannot fit/);
  // An unknown value type for the first pair.
  const keyLength = Number(valid.readBigUInt64LE(24));
  const badType = Buffer.from(valid);
  badType.writeUInt32LE(77, 32 + keyLength);
  await rejects(file(badType), /unknown value type 77/);
});

test('any corruption of a header gives a summary or a GgufFormatError, never another error', async () => {
  const valid = buildGgufFixture({ vocabSize: 300, merges: 100, chatTemplate: 'x', fileType: 2, poolingType: 1, split: { no: 0, count: 2 } });
  const path = join(dir, 'fuzz.gguf');
  await fc.assert(fc.asyncProperty(
    fc.array(fc.record({ at: fc.nat({ max: valid.length - 1 }), byte: fc.integer({ min: 0, max: 255 }) }), { minLength: 1, maxLength: 8 }),
    fc.option(fc.nat({ max: valid.length }), { nil: undefined }),
    async (edits, cut) => {
      const bytes = Buffer.from(valid);
      for (const { at, byte } of edits) bytes[at] = byte;
      writeFileSync(path, cut === undefined ? bytes : bytes.subarray(0, cut));
      try {
        await readGgufSummary(path);
      } catch (error) {
        if (!(error instanceof GgufFormatError)) throw error;
      }
    },
  ), { numRuns: 300, seed: 8 });
  assert.ok(readFileSync(path).length > 0);
});
