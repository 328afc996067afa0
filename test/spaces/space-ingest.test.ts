import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { setTimeout as sleep } from 'node:timers/promises';
import { generateBulkDocuments } from '../../src/spaces/eval/labelled-set.ts';
import { HashedEmbedder } from '../../src/spaces/hashed-embedder.ts';
import { openSpaceLibrary } from '../../src/spaces/space-library.ts';
import type { DocumentInput, Embedder } from '../../src/spaces/space-types.ts';

/**
 * An embedder that answers a few milliseconds later, as one on another thread does, and notes
 * how many chunks the space had stored when each call began; calls holding `failOn` fail.
 */
class SlowEmbedder implements Embedder {
  readonly #inner = new HashedEmbedder();
  readonly id = this.#inner.id;
  readonly dimensions = this.#inner.dimensions;
  readonly storedAtCall: number[] = [];
  readonly dataDir: string;
  readonly failOn: string | null;

  constructor(dataDir: string, failOn: string | null) {
    this.dataDir = dataDir;
    this.failOn = failOn;
  }

  async embed(texts: readonly string[], purpose: 'document' | 'query'): Promise<Float32Array[]> {
    if (purpose === 'document') {
      const db = new DatabaseSync(join(this.dataDir, 'spaces', 'spaces.db'), { readOnly: true });
      this.storedAtCall.push((db.prepare('SELECT count(*) AS n FROM chunks').get() as { n: number }).n);
      db.close();
    }
    await sleep(5);
    if (this.failOn !== null && texts.some((text) => text.includes(this.failOn!))) throw new Error('embedder failed');
    return this.#inner.embed(texts, purpose);
  }
}

function inputs(count: number): DocumentInput[] {
  const list: DocumentInput[] = [];
  for (const document of generateBulkDocuments({ seed: 11 })) {
    list.push(document.input);
    if (list.length === count) break;
  }
  return list;
}

async function ingest(documents: DocumentInput[], failOn: string | null) {
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-ingest-'));
  const embedder = new SlowEmbedder(dataDir, failOn);
  const library = await openSpaceLibrary({ dataDir, embedder });
  try {
    await library.createSpace('kb');
    const results = await library.addDocuments('kb', documents);
    const space = await library.getSpace('kb');
    const found = await library.search('kb', { query: 'maximum operating pressure', mode: 'hybrid', top_k: 5 });
    return { results, space, storedAtCall: embedder.storedAtCall, found };
  } finally {
    await library.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

test('addDocuments embeds the next group while the current one is written, and writes them in order', async () => {
  const documents = inputs(400);
  const chunks = documents.reduce((n, d) => n + d.chunks.length, 0);
  assert.ok(chunks > 1000, 'enough chunks for several write groups');
  const { results, space, storedAtCall, found } = await ingest(documents, null);
  assert.ok(results.every((result) => result.ok && result.created));
  assert.equal(space.chunk_count, chunks);
  assert.ok(found.length > 0);
  // The first group's batches start on an empty space; the second group's first batch starts
  // before the first group is stored (one group ahead), and no further group does.
  assert.equal(storedAtCall[0], 0);
  const firstStored = storedAtCall.findIndex((n) => n > 0);
  assert.ok(firstStored > 0, 'the first write comes after some embedding');
  const groupBatches = storedAtCall.filter((n) => n === 0).length;
  assert.ok(groupBatches >= 3, `the second group was embedded before the first was written (${groupBatches} batches before any write)`);
  // A group is 256 chunks and the end of a document (these have at most a few dozen): 3 batches
  // of 128. Two groups ahead would be 7 or more.
  assert.ok(groupBatches <= 6, `at most one group embedded ahead of the writes (${groupBatches} batches before any write)`);
  // Stored counts only grow, by whole groups: writes happen in order, one at a time.
  for (let i = 1; i < storedAtCall.length; i++) assert.ok(storedAtCall[i]! >= storedAtCall[i - 1]!);
});

test('addDocuments: a group whose embedding fails fails alone; the groups around it are stored', async () => {
  const documents = inputs(400);
  // A word only in one document, well past the first group.
  const marked = 250;
  documents[marked] = { ...documents[marked]!, chunks: documents[marked]!.chunks.map((chunk, i) => (i === 0 ? { ...chunk, text: `${chunk.text} zzqmarker` } : chunk)) };
  const { results, space } = await ingest(documents, 'zzqmarker');
  const failed = results.flatMap((result, i) => (result.ok ? [] : [i]));
  assert.ok(failed.includes(marked));
  assert.ok(failed.length < documents.length / 2, `only the marked document's group failed (${failed.length})`);
  // The failed documents are one run of neighbours (a group), the rest are stored.
  assert.deepEqual(failed, Array.from({ length: failed.length }, (_, i) => failed[0]! + i));
  assert.equal(space.document_count, documents.length - failed.length);
});
