import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { TransferListItem } from 'node:worker_threads';
import { ApiError } from '../../src/shared/api-error.ts';
import { OffThread } from '../../src/shared/off-thread.ts';
import { generateBulkDocuments } from '../../src/spaces/eval/labelled-set.ts';
import { HashedEmbedder } from '../../src/spaces/hashed-embedder.ts';
import { OffThreadHashedEmbedder } from '../../src/spaces/off-thread-embeddings.ts';

/** A real OffThread that counts its tasks, or refuses them with `refuse`. */
class CountingThread extends OffThread {
  tasks = 0;
  refuse: ApiError | null = null;

  override run<T>(module: URL, exportName: string, args: unknown[], transfer: TransferListItem[] = []): Promise<T> {
    this.tasks++;
    if (this.refuse !== null) return Promise.reject(this.refuse);
    return super.run<T>(module, exportName, args, transfer);
  }
}

/** Chunk texts of generated documents: well past the inline limit together. */
function chunkTexts(count: number): string[] {
  const texts: string[] = [];
  for (const document of generateBulkDocuments({ seed: 3 })) {
    for (const chunk of document.input.chunks) {
      texts.push(chunk.text);
      if (texts.length === count) return texts;
    }
  }
  return texts;
}

const bits = (vectors: Float32Array[]) => vectors.map((vector) => Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength).toString('base64'));

test('the built-in embedder hashes a large document batch on its thread, to the same bits as inline; queries and small batches stay inline', async () => {
  const thread = new CountingThread();
  try {
    for (const options of [{}, { version: 1 as const, dimensions: 256 }]) {
      const inline = new HashedEmbedder(options);
      const offThread = new OffThreadHashedEmbedder(options, thread);
      const texts = chunkTexts(128);
      assert.ok(texts.join('').length > 16 * 1024);
      const before = thread.tasks;
      const vectors = await offThread.embed(texts, 'document');
      assert.equal(thread.tasks, before + 1);
      assert.equal(vectors.length, texts.length);
      assert.ok(vectors.every((vector) => vector.length === inline.dimensions));
      assert.deepEqual(bits(vectors), bits(await inline.embed(texts, 'document')));
      // A query, however long, and a small batch of documents: no thread hop.
      await offThread.embed(texts, 'query');
      await offThread.embed(texts.slice(0, 4), 'document');
      assert.equal(thread.tasks, before + 1);
    }
  } finally {
    await thread.close();
  }
});

test('a thread that refuses the work (queue full, shutting down) leaves the batch to be hashed inline; another failure is the caller\'s', async () => {
  const thread = new CountingThread();
  const texts = chunkTexts(128);
  const offThread = new OffThreadHashedEmbedder({}, thread);
  thread.refuse = ApiError.busy('full', 1);
  assert.deepEqual(bits(await offThread.embed(texts, 'document')), bits(await new HashedEmbedder().embed(texts, 'document')));
  thread.refuse = ApiError.internal(new Error('worker died'));
  await assert.rejects(offThread.embed(texts, 'document'), (error: unknown) => error instanceof ApiError && error.status === 500);
  assert.equal(thread.tasks, 2);
  await thread.close();
});
