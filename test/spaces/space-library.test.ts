import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { ApiError } from '../../src/shared/api-error.ts';
import { generateBulkDocuments } from '../../src/spaces/eval/labelled-set.ts';
import { HashedEmbedder } from '../../src/spaces/hashed-embedder.ts';
import { Int8VectorIndex } from '../../src/spaces/int8-vector-index.ts';
import { openSpaceLibrary } from '../../src/spaces/space-library.ts';
import type { DocumentInput, Embedder, SearchMode, SearchResult, SpaceLibrary } from '../../src/spaces/space-types.ts';
import { seededRandom } from '../../src/spaces/eval/seeded-random.ts';
import { foldedWords } from '../../src/spaces/word-tokens.ts';

const MODES: SearchMode[] = ['hybrid', 'bm25', 'dense'];

/** A document whose chunks are its paragraphs. */
function doc(text: string, extra: Partial<DocumentInput> = {}): DocumentInput {
  const paragraphs = text.split(/\n\n+/);
  return { format: 'text', text, chunks: paragraphs.map((paragraph, position) => ({ text: paragraph, position, page: null, headingPath: [] })), ...extra };
}

const GARDEN = doc(
  'Tomatoes need six hours of direct sunlight and deep watering twice a week.\n\n'
  + 'Prune the suckers of indeterminate tomato vines so the plant puts its energy into fruit.\n\n'
  + 'Compost and mulch keep the soil moist and cool in the summer heat.',
  { title: 'Growing tomatoes', source: 'garden.md', metadata: { topic: 'garden', year: 2024, reviewed: true } },
);
const ASTRONOMY = doc(
  'A neutron star is the collapsed core of a massive star after a supernova explosion.\n\n'
  + 'Pulsars are rotating neutron stars that sweep beams of radio emission across the sky.',
  { title: 'Neutron stars', metadata: { topic: 'space', year: 2023 } },
);
const COOKING = doc(
  'Knead the bread dough for ten minutes until it is smooth and elastic.\n\n'
  + 'Let the dough rise in a warm place until it doubles in size, then bake at 220 degrees.',
  { title: 'Bread', metadata: { topic: 'kitchen', year: '2024' } },
);

async function withLibrary(fn: (library: SpaceLibrary, dataDir: string) => Promise<void>, embedder?: Embedder): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-spaces-'));
  const library = await openSpaceLibrary({ dataDir, ...(embedder === undefined ? {} : { embedder }) });
  try {
    await fn(library, dataDir);
  } finally {
    await library.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

async function rejectsWith(promise: Promise<unknown>, status: number, code: string): Promise<void> {
  await assert.rejects(promise, (error: unknown) => {
    assert.ok(error instanceof ApiError, `expected an ApiError, got ${String(error)}`);
    assert.equal(error.code, code);
    assert.equal(error.status, status);
    return true;
  });
}

/**
 * What the store holds agrees with itself: counts with rows, a vector and an FTS row for every
 * chunk and no more, word statistics equal to a recount, no reindex leftovers.
 */
function assertConsistent(dataDir: string): void {
  const db = new DatabaseSync(join(dataDir, 'spaces', 'spaces.db'), { readOnly: true });
  try {
    const count = (sql: string, ...params: number[]) => (db.prepare(sql).get(...params) as { n: number }).n;
    assert.equal(count('SELECT count(*) AS n FROM chunks'), count('SELECT coalesce(sum(chunk_count), 0) AS n FROM spaces'));
    assert.equal(count('SELECT count(*) AS n FROM documents'), count('SELECT coalesce(sum(document_count), 0) AS n FROM spaces'));
    assert.equal(count('SELECT count(*) AS n FROM chunk_vectors'), count('SELECT count(*) AS n FROM chunks'));
    assert.equal(count('SELECT count(*) AS n FROM chunk_vectors v JOIN chunks c ON c.id = v.chunk_id AND c.space_id = v.space_id'), count('SELECT count(*) AS n FROM chunks'));
    assert.equal(count('SELECT count(*) AS n FROM reindex_vectors'), 0);
    for (const { id } of db.prepare('SELECT id FROM spaces').all() as { id: number }[]) {
      assert.equal(count(`SELECT count(*) AS n FROM space_text_${id}`), count('SELECT count(*) AS n FROM chunks WHERE space_id = ?', id));
      const recount = new Map<string, number>();
      for (const { text } of db.prepare('SELECT text FROM chunks WHERE space_id = ?').all(id) as { text: string }[]) {
        for (const word of new Set(foldedWords(text))) recount.set(word, (recount.get(word) ?? 0) + 1);
      }
      const stored = new Map((db.prepare('SELECT word, df FROM space_words WHERE space_id = ?').all(id) as { word: string; df: number }[]).map((row) => [row.word, row.df]));
      assert.deepEqual(stored, recount);
    }
  } finally {
    db.close();
  }
}

/** A small model-like embedder: letter frequencies (26 dimensions), another id than the built-in one. */
class LetterEmbedder implements Embedder {
  readonly id = 'test-letters-v1';
  readonly dimensions = 26;
  calls = 0;
  async embed(texts: readonly string[]): Promise<Float32Array[]> {
    this.calls++;
    return texts.map((text) => {
      const vector = new Float32Array(26);
      for (const c of text.toLowerCase()) {
        const i = c.charCodeAt(0) - 97;
        if (i >= 0 && i < 26) vector[i]!++;
      }
      const norm = Math.hypot(...vector);
      return norm === 0 ? vector : vector.map((v) => v / norm);
    });
  }
}

test('spaces: create, list, get, delete; names validated and unique regardless of case', async () => {
  await withLibrary(async (library) => {
    const created = await library.createSpace('Notes');
    assert.equal(created.name, 'Notes');
    assert.equal(created.embedder, 'svc-hashed-embed-v2');
    assert.equal(created.dimensions, new HashedEmbedder().dimensions);
    assert.equal(created.document_count, 0);
    assert.equal(created.reindex_required, false);
    await rejectsWith(library.createSpace('notes'), 409, 'space_exists');
    await rejectsWith(library.createSpace('NOTES'), 409, 'space_exists');
    for (const bad of ['', '-x', '.x', 'a b', 'a/b', '../x', 'x'.repeat(65), 'ünï', '__proto__', '_x']) {
      await rejectsWith(library.createSpace(bad), 400, 'invalid_space_name');
    }
    await rejectsWith(library.createSpace(42 as unknown as string), 400, 'invalid_space_name');
    assert.equal((await library.createSpace('x'.repeat(64))).name.length, 64);
    // Names that are properties of every object are ordinary names.
    for (const name of ['constructor', 'toString', 'hasOwnProperty']) {
      await rejectsWith(library.getSpace(name), 404, 'space_not_found');
      assert.equal((await library.createSpace(name)).name, name);
      assert.equal((await library.getSpace(name)).name, name);
    }
    assert.deepEqual((await library.listSpaces()).map((s) => s.name), ['constructor', 'hasOwnProperty', 'Notes', 'toString', 'x'.repeat(64)]);
    assert.equal((await library.getSpace('nOtEs')).name, 'Notes');
    await library.deleteSpace('NOTES');
    await rejectsWith(library.getSpace('Notes'), 404, 'space_not_found');
    await rejectsWith(library.deleteSpace('Notes'), 404, 'space_not_found');
    await rejectsWith(library.search('Notes', { query: 'x' }), 404, 'space_not_found');
    // The name is free again, and the new space starts empty.
    assert.equal((await library.createSpace('notes')).document_count, 0);
  });
});

test('spaces: search defaults are set at creation, changed field by field, kept on disk, and checked', async () => {
  await withLibrary(async (library, dataDir) => {
    const plain = await library.createSpace('plain');
    assert.deepEqual([plain.rerank, plain.rerank_depth], [false, null]);
    const named = await library.createSpace('named', { rerank: 'bge-reranker', rerank_depth: 12 });
    assert.deepEqual([named.rerank, named.rerank_depth], ['bge-reranker', 12]);
    // A model id that reads like JSON stays a string.
    assert.equal((await library.createSpace('odd', { rerank: 'false' })).rerank, 'false');

    const on = await library.updateSpace('PLAIN', { rerank: true });
    assert.deepEqual([on.name, on.rerank, on.rerank_depth], ['plain', true, null]);
    assert.ok(on.updated_at >= plain.updated_at);
    assert.deepEqual(await library.updateSpace('plain', { rerank_depth: 40 }).then((s) => [s.rerank, s.rerank_depth]), [true, 40]);
    assert.deepEqual(await library.updateSpace('plain', {}).then((s) => [s.rerank, s.rerank_depth]), [true, 40]);
    assert.deepEqual(await library.updateSpace('named', { rerank: false, rerank_depth: null }).then((s) => [s.rerank, s.rerank_depth]), [false, null]);
    assert.deepEqual((await library.getSpace('plain')).rerank, true);
    assert.deepEqual((await library.listSpaces()).map((s) => [s.name, s.rerank, s.rerank_depth]), [['named', false, null], ['odd', 'false', null], ['plain', true, 40]]);

    for (const bad of [{ rerank: '' }, { rerank: 3 }, { rerank: null }, { rerank_depth: 0 }, { rerank_depth: 101 }, { rerank_depth: 2.5 }, { rerank_depth: '5' }, { other: 1 }]) {
      await rejectsWith(library.updateSpace('plain', bad as never), 400, 'invalid_request');
      await rejectsWith(library.createSpace('never', bad as never), 400, 'invalid_request');
    }
    await rejectsWith(library.getSpace('never'), 404, 'space_not_found');
    await rejectsWith(library.updateSpace('missing', { rerank: true }), 404, 'space_not_found');
    assert.deepEqual(await library.getSpace('plain').then((s) => [s.rerank, s.rerank_depth]), [true, 40], 'a refused change changed nothing');

    // Another process opening the store sees them.
    const other = await openSpaceLibrary({ dataDir });
    try {
      assert.deepEqual((await other.listSpaces()).map((s) => [s.name, s.rerank, s.rerank_depth]), [['named', false, null], ['odd', 'false', null], ['plain', true, 40]]);
    } finally {
      await other.close();
    }
  });
});

test('documents: add, idempotent re-add, list with pages, get with text, replace, delete, counts', async () => {
  await withLibrary(async (library, dataDir) => {
    await library.createSpace('kb');
    const { document, created } = await library.addDocument('kb', GARDEN);
    assert.equal(created, true);
    assert.match(document.id, /^doc_/);
    assert.equal(document.space, 'kb');
    assert.equal(document.title, 'Growing tomatoes');
    assert.equal(document.source, 'garden.md');
    assert.deepEqual(document.metadata, { topic: 'garden', year: 2024, reviewed: true });
    assert.equal(document.chunk_count, 3);
    assert.equal(document.text_bytes, Buffer.byteLength(GARDEN.text));
    assert.match(document.content_hash, /^[0-9a-f]{64}$/);

    const again = await library.addDocument('kb', { ...GARDEN, title: 'another title' });
    assert.equal(again.created, false);
    assert.equal(again.document.id, document.id);
    assert.equal(again.document.title, 'Growing tomatoes');

    const astronomy = (await library.addDocument('kb', ASTRONOMY)).document;
    const cooking = (await library.addDocument('kb', COOKING)).document;
    let space = await library.getSpace('kb');
    assert.equal(space.document_count, 3);
    assert.equal(space.chunk_count, 7);
    assert.equal(space.text_bytes, [GARDEN, ASTRONOMY, COOKING].reduce((sum, d) => sum + Buffer.byteLength(d.text), 0));

    const first = await library.listDocuments('kb', { limit: 2 });
    assert.deepEqual(first.documents.map((d) => d.id), [document.id, astronomy.id]);
    assert.equal(first.next, astronomy.id);
    const second = await library.listDocuments('kb', { limit: 2, after: first.next! });
    assert.deepEqual(second.documents.map((d) => d.id), [cooking.id]);
    assert.equal(second.next, null);
    assert.equal((await library.listDocuments('kb')).documents.length, 3);
    await rejectsWith(library.listDocuments('kb', { after: 'doc_nope' }), 400, 'invalid_cursor');
    await rejectsWith(library.listDocuments('kb', { limit: 0 }), 400, 'invalid_limit');

    // A document's chunks page like the documents (SQL LIMIT; `next` is the last chunk's id).
    const chunkPage = await library.listChunks('kb', document.id, { limit: 2 });
    assert.deepEqual(chunkPage.chunks.map((c) => [c.position, c.text]), [[0, GARDEN.chunks[0]!.text], [1, GARDEN.chunks[1]!.text]]);
    assert.equal(chunkPage.next, chunkPage.chunks[1]!.id);
    const lastChunks = await library.listChunks('kb', document.id, { limit: 2, after: chunkPage.next! });
    assert.deepEqual(lastChunks.chunks.map((c) => c.position), [2]);
    assert.equal(lastChunks.next, null);
    assert.equal((await library.listChunks('kb', document.id)).chunks.length, 3);
    // A cursor from another document is not one of this document's chunks.
    const astronomyChunk = (await library.listChunks('kb', astronomy.id, { limit: 1 })).chunks[0]!.id;
    await rejectsWith(library.listChunks('kb', document.id, { after: astronomyChunk }), 400, 'invalid_cursor');
    await rejectsWith(library.listChunks('kb', document.id, { limit: 1001 }), 400, 'invalid_limit');
    await rejectsWith(library.listChunks('kb', 'doc_nope'), 404, 'document_not_found');

    const withText = await library.getDocument('kb', astronomy.id, { includeText: true });
    assert.equal(withText.text, ASTRONOMY.text);
    assert.equal((await library.getDocument('kb', astronomy.id)).text, undefined);

    const replaced = await library.replaceDocument('kb', astronomy.id, doc('Black holes bend light.', { title: 'Black holes' }));
    assert.equal(replaced.id, astronomy.id);
    assert.equal(replaced.title, 'Black holes');
    assert.equal(replaced.chunk_count, 1);
    assert.deepEqual(replaced.metadata, {});
    assert.equal(replaced.created_at, astronomy.created_at);
    space = await library.getSpace('kb');
    assert.equal(space.chunk_count, 6);
    // Replacing with the text another document holds would make two documents of one text.
    await rejectsWith(library.replaceDocument('kb', astronomy.id, GARDEN), 409, 'duplicate_document');
    // Replacing a document with its own text again is allowed (its fields may change).
    assert.equal((await library.replaceDocument('kb', document.id, { ...GARDEN, title: 'Tomatoes' })).title, 'Tomatoes');

    await library.deleteDocument('kb', cooking.id);
    await rejectsWith(library.getDocument('kb', cooking.id), 404, 'document_not_found');
    await rejectsWith(library.deleteDocument('kb', cooking.id), 404, 'document_not_found');
    await rejectsWith(library.replaceDocument('kb', cooking.id, COOKING), 404, 'document_not_found');
    space = await library.getSpace('kb');
    assert.equal(space.document_count, 2);
    assert.equal(space.chunk_count, 4);
    // A document of another space is not found through this one.
    await library.createSpace('other');
    await rejectsWith(library.getDocument('other', document.id), 404, 'document_not_found');
    // The deleted text can be added again as a new document.
    assert.equal((await library.addDocument('kb', COOKING)).created, true);
    assertConsistent(dataDir);
  });
});

test('addDocuments: one result per input in order; bad, repeated and present texts settle alone; onResult hears each once', async () => {
  await withLibrary(async (library, dataDir) => {
    await library.createSpace('kb');
    const present = (await library.addDocument('kb', GARDEN)).document;
    const heard = new Map<number, number>();
    const results = await library.addDocuments('kb', [
      ASTRONOMY,
      { ...COOKING, format: 'papyrus' } as unknown as DocumentInput,
      GARDEN,
      COOKING,
      { ...ASTRONOMY, title: 'the same text again' },
    ], (index) => heard.set(index, (heard.get(index) ?? 0) + 1));
    assert.deepEqual([...heard.entries()].sort(([a], [b]) => a - b), [[0, 1], [1, 1], [2, 1], [3, 1], [4, 1]]);
    assert.equal(results.length, 5);
    const [astronomy, bad, garden, cooking, repeat] = results;
    assert.ok(astronomy?.ok && astronomy.created && astronomy.document.title === 'Neutron stars');
    assert.ok(bad !== undefined && !bad.ok && bad.error instanceof ApiError && bad.error.status === 400 && bad.error.code === 'invalid_document');
    assert.ok(garden?.ok && !garden.created && garden.document.id === present.id);
    assert.ok(cooking?.ok && cooking.created);
    assert.ok(repeat?.ok && !repeat.created && repeat.document.id === astronomy.document.id && repeat.document.title === 'Neutron stars');
    const space = await library.getSpace('kb');
    assert.equal(space.document_count, 3);
    assert.equal(space.chunk_count, 7);
    assert.deepEqual((await library.listDocuments('kb')).documents.map((d) => d.id), [present.id, astronomy.document.id, cooking.document.id]);
    assertConsistent(dataDir);
    await rejectsWith(library.addDocuments('nope', [GARDEN]), 404, 'space_not_found');
  });
});

test('addDocuments: many documents in a few transactions store and search exactly as one at a time', async () => {
  // Enough chunks for several write transactions.
  const inputs = [...take(generateBulkDocuments({ seed: 7 }), 160)].map((document) => document.input);
  assert.ok(inputs.reduce((sum, input) => sum + input.chunks.length, 0) > 600);
  const queries = ['maximum operating pressure', 'opening hours of the market', 'incubate the samples overnight', 'parental leave'];
  const state = async (library: SpaceLibrary, dataDir: string) => {
    const words = new DatabaseSync(join(dataDir, 'spaces', 'spaces.db'), { readOnly: true });
    try {
      const rows = words.prepare('SELECT word, df FROM space_words ORDER BY word').all();
      const space = await library.getSpace('kb');
      const searches: unknown[] = [];
      for (const query of queries) {
        for (const mode of MODES) {
          // Public ids are random; everything else (text, scores, ranks, order) must match.
          searches.push((await library.search('kb', { query, mode, top_k: 10 })).map(({ chunk_id: _c, document_id: _d, ...rest }) => rest));
        }
      }
      return { rows, counts: [space.document_count, space.chunk_count, space.text_bytes], searches };
    } finally {
      words.close();
    }
  };
  let one: Awaited<ReturnType<typeof state>> | undefined;
  await withLibrary(async (library, dataDir) => {
    await library.createSpace('kb');
    for (const input of inputs) await library.addDocument('kb', input);
    one = await state(library, dataDir);
  });
  await withLibrary(async (library, dataDir) => {
    await library.createSpace('kb');
    const results = await library.addDocuments('kb', inputs);
    assert.ok(results.every((result) => result.ok && result.created));
    assertConsistent(dataDir);
    assert.deepEqual(await state(library, dataDir), one);
    assert.ok(one!.searches.some((list) => (list as unknown[]).length > 0));
  });
});

test('addDocuments: a document the store refuses fails alone, the rest of its transaction goes in', async () => {
  await withLibrary(async (library, dataDir) => {
    await library.createSpace('kb');
    const raw = new DatabaseSync(join(dataDir, 'spaces', 'spaces.db'));
    raw.exec("CREATE TRIGGER refuse_quokkas BEFORE INSERT ON chunks WHEN NEW.text LIKE '%quokka%' BEGIN SELECT RAISE(ABORT, 'refused'); END");
    raw.close();
    const poisoned = doc('Quokkas smile in photos.\n\nQuokkas live on Rottnest island.');
    const results = await library.addDocuments('kb', [GARDEN, poisoned, ASTRONOMY]);
    assert.deepEqual(results.map((result) => result.ok), [true, false, true]);
    assert.match(String((results[1] as { error: unknown }).error), /refused/);
    assert.equal((await library.getSpace('kb')).document_count, 2);
    await assertGone(library, 'kb', ['quokkas', 'rottnest']);
    assert.equal((await library.search('kb', { query: 'pulsars', mode: 'hybrid' }))[0]?.text, ASTRONOMY.chunks[1]!.text);
    assertConsistent(dataDir);
  });
});

function* take<T>(items: Iterable<T>, count: number): Generator<T> {
  if (count <= 0) return;
  for (const item of items) {
    yield item;
    if (--count === 0) return;
  }
}

test('documents: bad input is a 400 naming the part, never a store error', async () => {
  await withLibrary(async (library) => {
    await library.createSpace('kb');
    const badMetadata: unknown[] = [
      { nested: { a: 1 } },
      { list: [1, 2] },
      { nothing: null },
      { long: 'x'.repeat(1001) },
      { ['k'.repeat(65)]: 1 },
      { '': 1 },
      Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`k${i}`, i])),
      'a string',
      [1, 2],
    ];
    for (const metadata of badMetadata) {
      await rejectsWith(library.addDocument('kb', { ...GARDEN, metadata } as DocumentInput), 400, 'invalid_metadata');
    }
    const atLimits = Object.fromEntries(Array.from({ length: 64 }, (_, i) => [`${i}`.padEnd(64, 'k'), 'v'.repeat(1000)]));
    assert.equal((await library.addDocument('kb', { ...GARDEN, metadata: atLimits })).created, true);
    const chunks = GARDEN.chunks.map((chunk) => ({ ...chunk, position: 0 }));
    await rejectsWith(library.addDocument('kb', { ...ASTRONOMY, chunks }), 400, 'invalid_document');
    await rejectsWith(library.addDocument('kb', { ...ASTRONOMY, format: 'exe' } as unknown as DocumentInput), 400, 'invalid_document');
    await rejectsWith(library.addDocument('kb', { ...ASTRONOMY, chunks: [{ text: '', position: 0, page: null, headingPath: [] }] }), 400, 'invalid_document');
    await rejectsWith(library.addDocument('kb', { ...ASTRONOMY, text: 5 } as unknown as DocumentInput), 400, 'invalid_document');
    assert.equal((await library.getSpace('kb')).document_count, 1);
  });
});

test('metadata: keys that are object properties stay ordinary keys, and filters match type and value exactly', async () => {
  await withLibrary(async (library) => {
    await library.createSpace('kb');
    const metadata = JSON.parse('{"__proto__": "p", "constructor": "c", "toString": 1}') as Record<string, string | number>;
    const { document } = await library.addDocument('kb', { ...GARDEN, metadata });
    const stored = (await library.getDocument('kb', document.id)).metadata;
    assert.deepEqual(Object.keys(stored).sort(), ['__proto__', 'constructor', 'toString']);
    assert.equal(Object.getOwnPropertyDescriptor(stored, '__proto__')?.value, 'p');
    await library.addDocument('kb', COOKING);

    const hits = async (filterMetadata: Record<string, string | number | boolean>) => {
      const results = await library.search('kb', { query: 'tomatoes bread dough sunlight', mode: 'bm25', top_k: 20, filter: { metadata: filterMetadata } });
      return [...new Set(results.map((r) => r.title))].sort();
    };
    assert.deepEqual(await hits(JSON.parse('{"__proto__": "p"}') as Record<string, string>), ['Growing tomatoes']);
    assert.deepEqual(await hits({ constructor: 'c' }), ['Growing tomatoes']);
    assert.deepEqual(await hits({ toString: '1' }), []);
    assert.deepEqual(await hits({ year: '2024' }), ['Bread']);
    assert.deepEqual(await hits({ topic: 'kitchen', year: '2024' }), ['Bread']);
    assert.deepEqual(await hits({ topic: 'kitchen', year: 2024 }), []);
  });
});

test('search: each mode finds the obvious passage first, with ranks, scores and a marked snippet', async () => {
  await withLibrary(async (library) => {
    await library.createSpace('kb');
    const garden = (await library.addDocument('kb', GARDEN)).document;
    await library.addDocument('kb', ASTRONOMY);
    await library.addDocument('kb', COOKING);
    for (const mode of MODES) {
      const [top, ...rest] = await library.search('kb', { query: 'how much sunlight do tomatoes need', mode });
      assert.ok(top !== undefined, mode);
      assert.equal(top.text, GARDEN.chunks[0]!.text, mode);
      assert.equal(top.document_id, garden.id);
      assert.equal(top.space, 'kb');
      assert.equal(top.title, 'Growing tomatoes');
      assert.equal(top.source, 'garden.md');
      assert.equal(top.page, null);
      assert.deepEqual(top.heading_path, []);
      assert.match(top.chunk_id, /^chunk_/);
      assert.ok(top.snippet.includes('«sunlight»') && top.snippet.includes('«Tomatoes»'), top.snippet);
      assert.equal(top.bm25_rank, mode === 'dense' ? null : 1);
      assert.equal(top.dense_rank, mode === 'bm25' ? null : 1);
      assert.equal(top.score, mode === 'hybrid' ? 2 / 61 : 1 / 61);
      for (const result of rest) assert.ok(result.score <= top.score);
    }
    // A word in another form: BM25 stems, the embedder's n-grams overlap.
    for (const mode of MODES) {
      const [top] = await library.search('kb', { query: 'pulsar rotation', mode });
      assert.equal(top?.title, 'Neutron stars', mode);
    }
    assert.equal((await library.search('kb', { query: 'stars', mode: 'bm25', top_k: 1 })).length, 1);
    // Words the space has never seen find nothing by BM25.
    assert.deepEqual(await library.search('kb', { query: 'xylophone', mode: 'bm25' }), []);
    // A query without a single word finds nothing, in any mode.
    for (const mode of MODES) assert.deepEqual(await library.search('kb', { query: '?!… —', mode }), []);
  });
});

test('search: hybrid hands its BM25 list to the vector index as a hint (alsoConsider); dense mode gives none', async () => {
  const hints: (readonly number[] | undefined)[] = [];
  /** The exact index, recording each search's hint: what an approximate one would rescore beside its own candidates. */
  class HintSpy extends Int8VectorIndex {
    override search(query: Float32Array, k: number, accept?: (id: number) => boolean, alsoConsider?: readonly number[]) {
      hints.push(alsoConsider);
      return super.search(query, k, accept);
    }
  }
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-spaces-'));
  const library = await openSpaceLibrary({ dataDir, vectorIndex: (dims) => new HintSpy(dims) });
  try {
    await library.createSpace('kb');
    await library.addDocument('kb', GARDEN);
    await library.addDocument('kb', ASTRONOMY);
    await library.addDocument('kb', COOKING);
    const bm25 = await library.search('kb', { query: 'sunlight tomatoes stars', mode: 'bm25', top_k: 50 });
    assert.ok(bm25.length >= 2);
    await library.search('kb', { query: 'sunlight tomatoes stars', mode: 'hybrid' });
    const hint = hints.at(-1);
    assert.ok(hint !== undefined);
    // The hint is BM25's whole list (row ids), best first: as many as BM25 found.
    assert.equal(hint.length, bm25.length);
    await library.search('kb', { query: 'sunlight tomatoes stars', mode: 'dense' });
    assert.equal(hints.at(-1), undefined);
  } finally {
    await library.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('search: FTS5 syntax in a query is plain text, never an error', async () => {
  await withLibrary(async (library) => {
    await library.createSpace('kb');
    await library.addDocument('kb', GARDEN);
    await library.addDocument('kb', ASTRONOMY);
    const queries = ['"', '"tomato', 'tomato*', '*', 'NEAR(tomato sunlight, 2)', 'NEAR(', 'tomato AND', 'AND', 'OR', 'NOT tomato', 'tomato NOT',
      '-tomato', 'text:tomato', ':', 'text : tomato', '^tomato', '(tomato', 'tomato)', '{text}: tomato', 'a + b', "o'brien", '""""', 'rank MATCH', '\\', '\u0000tomato'];
    for (const query of queries) {
      for (const mode of MODES) {
        const results = await library.search('kb', { query, mode });
        assert.ok(Array.isArray(results), `${mode} ${query}`);
      }
    }
    // The words in the syntax still count as words.
    assert.equal((await library.search('kb', { query: 'NEAR("tomato" sunlight*', mode: 'bm25' }))[0]?.title, 'Growing tomatoes');
  });
});

test('search: bad requests are 400s with stable codes', async () => {
  await withLibrary(async (library) => {
    await library.createSpace('kb');
    await rejectsWith(library.search('kb', { query: '' }), 400, 'invalid_query');
    await rejectsWith(library.search('kb', { query: ' \n\t ' }), 400, 'invalid_query');
    await rejectsWith(library.search('kb', { query: 'x'.repeat(4001) }), 400, 'invalid_query');
    await rejectsWith(library.search('kb', { query: 5 } as never), 400, 'invalid_query');
    assert.deepEqual(await library.search('kb', { query: 'x'.repeat(4000) }), []);
    for (const topK of [0, 101, 1.5, -1]) await rejectsWith(library.search('kb', { query: 'x', top_k: topK }), 400, 'invalid_top_k');
    await rejectsWith(library.search('kb', { query: 'x', mode: 'fuzzy' as SearchMode }), 400, 'invalid_search_mode');
    await rejectsWith(library.search('kb', { query: 'x', filter: { document_ids: 'doc_1' as never } }), 400, 'invalid_filter');
    await rejectsWith(library.search('kb', { query: 'x', filter: { metadata: { a: { b: 1 } } as never } }), 400, 'invalid_metadata');
    await rejectsWith(library.searchAll({ query: 'x', spaces: ['no such'] }), 400, 'invalid_space_name');
    await rejectsWith(library.searchAll({ query: 'x', spaces: [] }), 400, 'invalid_spaces');
    await rejectsWith(library.searchAll({ query: 'x', spaces: ['nosuch'] }), 404, 'space_not_found');
  });
});

test('search: filters by document id and metadata apply to both lists', async () => {
  await withLibrary(async (library) => {
    await library.createSpace('kb');
    const garden = (await library.addDocument('kb', GARDEN)).document;
    const astronomy = (await library.addDocument('kb', ASTRONOMY)).document;
    await library.addDocument('kb', COOKING);
    const query = 'tomato sunlight neutron star bread dough';
    for (const mode of MODES) {
      const byId = await library.search('kb', { query, mode, top_k: 20, filter: { document_ids: [astronomy.id] } });
      assert.ok(byId.length > 0, mode);
      assert.ok(byId.every((r) => r.document_id === astronomy.id), mode);
      const byMetadata = await library.search('kb', { query, mode, top_k: 20, filter: { metadata: { topic: 'garden', reviewed: true } } });
      assert.ok(byMetadata.length > 0, mode);
      assert.ok(byMetadata.every((r) => r.document_id === garden.id), mode);
      const both = await library.search('kb', { query, mode, filter: { document_ids: [astronomy.id], metadata: { topic: 'garden' } } });
      assert.deepEqual(both, [], mode);
      assert.deepEqual(await library.search('kb', { query, mode, filter: { document_ids: ['doc_unknown'] } }), [], mode);
    }
  });
});

/** Every result of every mode for queries aimed at `words`: none may hold them. */
async function assertGone(library: SpaceLibrary, space: string, words: string[]): Promise<void> {
  for (const mode of MODES) {
    for (const query of [words.join(' '), ...words]) {
      const results: SearchResult[] = await library.search(space, { query, mode, top_k: 100 });
      for (const result of results) {
        for (const word of words) {
          assert.ok(!result.text.toLowerCase().includes(word), `${mode} "${query}" returned old text: ${result.text}`);
          assert.ok(!result.snippet.toLowerCase().includes(word), `${mode} "${query}" returned an old snippet: ${result.snippet}`);
        }
      }
    }
    const all = await library.searchAll({ query: words.join(' '), mode, top_k: 100 });
    for (const result of all) for (const word of words) assert.ok(!result.text.toLowerCase().includes(word), `searchAll ${mode}: ${result.text}`);
  }
}

test('stale text: replaced and deleted chunks never come back in any mode, even from a warm index or another library on the file', async () => {
  await withLibrary(async (library, dataDir) => {
    await library.createSpace('kb');
    const old = doc('The zebraphant grazes on quasiberries near the river.\n\nEvery zebraphant herd has a matriarch.');
    const { document } = await library.addDocument('kb', old);
    await library.addDocument('kb', ASTRONOMY);
    // A second library on the same file, its vector index filled before the change.
    const other = await openSpaceLibrary({ dataDir });
    try {
      for (const lib of [library, other]) {
        for (const mode of MODES) assert.ok((await lib.search('kb', { query: 'zebraphant', mode }))[0]?.text.includes('zebraphant'), mode);
      }
      await library.replaceDocument('kb', document.id, doc('The okapi lives in the rainforest.\n\nOkapis eat leaves.'));
      await assertGone(library, 'kb', ['zebraphant', 'quasiberries', 'matriarch']);
      await assertGone(other, 'kb', ['zebraphant', 'quasiberries', 'matriarch']);
      for (const lib of [library, other]) {
        for (const mode of MODES) assert.ok((await lib.search('kb', { query: 'okapi rainforest', mode }))[0]?.text.includes('okapi'), mode);
      }
      await library.deleteDocument('kb', document.id);
      await assertGone(library, 'kb', ['okapi', 'rainforest', 'zebraphant']);
      await assertGone(other, 'kb', ['okapi', 'rainforest', 'zebraphant']);
      // The other way round: a delete through the second library.
      const again = (await other.addDocument('kb', old)).document;
      for (const mode of MODES) assert.ok((await library.search('kb', { query: 'zebraphant', mode }))[0]?.text.includes('zebraphant'), mode);
      await other.deleteDocument('kb', again.id);
      await assertGone(library, 'kb', ['zebraphant', 'quasiberries']);
      // A deleted space's chunks are gone with it.
      await library.addDocument('kb', old);
      await library.deleteSpace('kb');
      await library.createSpace('kb');
      await assertGone(library, 'kb', ['zebraphant']);
      assertConsistent(dataDir);
    } finally {
      await other.close();
    }
  });
});

test('persistence: a new library on the same data dir has every space, document and vector', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-spaces-'));
  try {
    let library = await openSpaceLibrary({ dataDir });
    await library.createSpace('Kb');
    const garden = (await library.addDocument('Kb', GARDEN)).document;
    await library.addDocument('Kb', ASTRONOMY);
    const before = await Promise.all(MODES.map((mode) => library.search('Kb', { query: 'prune tomato vines', mode })));
    await library.close();
    await assert.rejects(library.listSpaces());

    library = await openSpaceLibrary({ dataDir });
    try {
      assert.deepEqual((await library.listSpaces()).map((s) => [s.name, s.document_count, s.chunk_count]), [['Kb', 2, 5]]);
      assert.deepEqual(await library.getDocument('kb', garden.id), garden);
      const after = await Promise.all(MODES.map((mode) => library.search('kb', { query: 'prune tomato vines', mode })));
      assert.deepEqual(after, before);
      assert.equal(after[2]![0]!.text, GARDEN.chunks[1]!.text);
      assert.equal((await library.addDocument('kb', GARDEN)).created, false);
    } finally {
      await library.close();
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('a failure inside the write leaves the space as it was: a chunk the store refuses, an embedder that throws', async () => {
  await withLibrary(async (library, dataDir) => {
    await library.createSpace('kb');
    const garden = (await library.addDocument('kb', GARDEN)).document;
    await library.search('kb', { query: 'tomato', mode: 'dense' });
    const before = await library.getSpace('kb');
    // Make the store itself refuse the third chunk of a document, mid-transaction (after the
    // document row, two chunks, their FTS rows and word counts were written).
    const raw = new DatabaseSync(join(dataDir, 'spaces', 'spaces.db'));
    raw.exec("CREATE TRIGGER refuse_third BEFORE INSERT ON chunks WHEN NEW.position = 2 BEGIN SELECT RAISE(ABORT, 'refused'); END");
    const poisoned = doc('Quokkas smile in photos.\n\nQuokkas live on Rottnest island.\n\nQuokkas are marsupials.');
    await assert.rejects(library.addDocument('kb', poisoned), /refused/);
    await assert.rejects(library.replaceDocument('kb', garden.id, poisoned), /refused/);
    raw.exec('DROP TRIGGER refuse_third');
    const wordRows = raw.prepare("SELECT count(*) AS n FROM space_words WHERE word = 'quokkas'").get() as { n: number };
    raw.close();

    assert.deepEqual(await library.getSpace('kb'), before);
    assert.equal(wordRows.n, 0);
    assert.deepEqual((await library.listDocuments('kb')).documents.map((d) => d.id), [garden.id]);
    assert.equal((await library.getDocument('kb', garden.id, { includeText: true })).text, GARDEN.text);
    await assertGone(library, 'kb', ['quokkas', 'rottnest']);
    for (const mode of MODES) assert.equal((await library.search('kb', { query: 'prune suckers', mode }))[0]?.text, GARDEN.chunks[1]!.text);
    assertConsistent(dataDir);
    // The same document goes in whole once the store accepts it.
    assert.equal((await library.addDocument('kb', poisoned)).document.chunk_count, 3);
    assertConsistent(dataDir);
  });

  const failing = new (class extends LetterEmbedder {
    override async embed(texts: readonly string[]): Promise<Float32Array[]> {
      if (texts.some((text) => text.includes('explode'))) throw new Error('embedder failed');
      return super.embed(texts);
    }
  })();
  await withLibrary(async (library) => {
    await library.createSpace('kb');
    await library.addDocument('kb', GARDEN);
    const before = await library.getSpace('kb');
    const chunks = Array.from({ length: 300 }, (_, i) => ({ text: i === 250 ? 'explode' : `chunk ${i} of a long text`, position: i, page: null, headingPath: [] }));
    await assert.rejects(library.addDocument('kb', { format: 'text', text: 'long', chunks }), /embedder failed/);
    assert.deepEqual(await library.getSpace('kb'), before);
    assert.deepEqual(await library.search('kb', { query: 'long text', mode: 'bm25' }), []);
  }, failing);
});

test('an embedder switch: reindex_required until reindexed, no mixed vectors, then searchable with the new one', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-spaces-'));
  try {
    let library = await openSpaceLibrary({ dataDir });
    await library.createSpace('kb');
    await library.createSpace('fresh');
    await library.addDocument('kb', GARDEN);
    const astronomy = (await library.addDocument('kb', ASTRONOMY)).document;
    await library.close();

    const letters = new LetterEmbedder();
    library = await openSpaceLibrary({ dataDir, embedder: letters });
    try {
      const stale = await library.getSpace('kb');
      assert.equal(stale.reindex_required, true);
      assert.equal(stale.embedder, 'svc-hashed-embed-v2');
      for (const mode of ['hybrid', 'dense'] as const) {
        await rejectsWith(library.search('kb', { query: 'tomato', mode }), 409, 'reindex_required');
        await rejectsWith(library.searchAll({ query: 'tomato', mode }), 409, 'reindex_required');
      }
      await rejectsWith(library.addDocument('kb', COOKING), 409, 'reindex_required');
      await rejectsWith(library.replaceDocument('kb', astronomy.id, COOKING), 409, 'reindex_required');
      // BM25 needs no vectors, and deleting needs none either.
      assert.equal((await library.search('kb', { query: 'tomato sunlight', mode: 'bm25' }))[0]?.title, 'Growing tomatoes');
      // A space made empty under the old embedder still waits for its reindex.
      assert.equal((await library.getSpace('fresh')).reindex_required, true);

      const progress: [number, number][] = [];
      const reindexed = await library.reindex('kb', (done, total) => progress.push([done, total]));
      assert.equal(reindexed.reindex_required, false);
      assert.equal(reindexed.embedder, 'test-letters-v1');
      assert.equal(reindexed.dimensions, 26);
      assert.equal(reindexed.chunk_count, 5);
      assert.deepEqual(progress[progress.length - 1], [5, 5]);
      // The letters embedder puts the query "pulsars" nearest the chunk that shares its letters most.
      const dense = await library.search('kb', { query: 'Pulsars are rotating neutron stars', mode: 'dense' });
      assert.equal(dense[0]?.text, ASTRONOMY.chunks[1]!.text);
      assert.equal(dense.length, 5);
      assert.equal((await library.search('kb', { query: 'tomato sunlight', mode: 'hybrid' }))[0]?.title, 'Growing tomatoes');
      assert.equal((await library.addDocument('kb', COOKING)).created, true);
      assertConsistent(dataDir);
      // Reindexing a space that needs none does nothing.
      const calls = letters.calls;
      await library.reindex('kb');
      assert.equal(letters.calls, calls);
    } finally {
      await library.close();
    }

    // Back to the built-in embedder: the space is stale again, the other way.
    library = await openSpaceLibrary({ dataDir });
    try {
      assert.equal((await library.getSpace('kb')).reindex_required, true);
      await library.reindex('kb');
      assert.equal((await library.search('kb', { query: 'knead the dough', mode: 'dense' }))[0]?.title, 'Bread');
    } finally {
      await library.close();
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

/** Each chunk's stored vector with its text, from the store itself. */
function storedVectors(dataDir: string): { text: string; vector: Float32Array }[] {
  const db = new DatabaseSync(join(dataDir, 'spaces', 'spaces.db'), { readOnly: true });
  try {
    const rows = db.prepare('SELECT c.text AS text, v.vector AS vector FROM chunks c JOIN chunk_vectors v ON v.chunk_id = c.id ORDER BY c.id').all() as { text: string; vector: Uint8Array }[];
    return rows.map((row) => ({ text: row.text, vector: new Float32Array(row.vector.buffer.slice(row.vector.byteOffset, row.vector.byteOffset + row.vector.byteLength)) }));
  } finally {
    db.close();
  }
}

test('a space made with svc-hashed-embed-v1 keeps its v1 vectors under the v2 default, and reindex moves it to v2', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-spaces-'));
  const v1 = new HashedEmbedder({ version: 1 });
  const v2 = new HashedEmbedder();
  const sameBits = (a: Float32Array, b: Float32Array) => Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(Buffer.from(b.buffer, b.byteOffset, b.byteLength));
  try {
    let library = await openSpaceLibrary({ dataDir, embedder: v1 });
    await library.createSpace('old');
    await library.addDocument('old', GARDEN);
    const v1Results = await Promise.all(MODES.map((mode) => library.search('old', { query: 'pruning tomato vines', mode })));
    await library.close();

    library = await openSpaceLibrary({ dataDir });
    try {
      const record = await library.getSpace('old');
      assert.equal(record.embedder, 'svc-hashed-embed-v1');
      assert.equal(record.reindex_required, false);
      // The same search as before the upgrade, in every mode: v1 query vectors against v1 vectors.
      assert.deepEqual(await Promise.all(MODES.map((mode) => library.search('old', { query: 'pruning tomato vines', mode }))), v1Results);
      assert.equal(v1Results[2]![0]!.text, GARDEN.chunks[1]!.text);
      // New documents in it get v1 vectors too (never mixed), and are found.
      await library.addDocument('old', ASTRONOMY);
      for (const { text, vector } of storedVectors(dataDir)) assert.ok(sameBits(vector, v1.embedText(text)), text);
      assert.equal((await library.search('old', { query: 'pulsar radio beams', mode: 'dense' }))[0]?.title, 'Neutron stars');
      assert.equal((await library.searchAll({ query: 'pulsar radio beams' }))[0]?.title, 'Neutron stars');
      // New spaces get v2.
      assert.equal((await library.createSpace('new')).embedder, 'svc-hashed-embed-v2');

      const moved = await library.reindex('old');
      assert.equal(moved.embedder, 'svc-hashed-embed-v2');
      assert.equal(moved.chunk_count, 5);
      for (const { text, vector } of storedVectors(dataDir)) assert.ok(sameBits(vector, v2.embedText(text)), text);
      assert.equal((await library.search('old', { query: 'pruning tomato vines', mode: 'dense' }))[0]?.text, GARDEN.chunks[1]!.text);
      assertConsistent(dataDir);
    } finally {
      await library.close();
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('searchAll: every space (or the named ones), fused by rank, each result naming its space', async () => {
  await withLibrary(async (library) => {
    await library.createSpace('garden');
    await library.createSpace('sky');
    await library.createSpace('kitchen');
    await library.addDocument('garden', GARDEN);
    await library.addDocument('sky', ASTRONOMY);
    await library.addDocument('kitchen', COOKING);
    for (const mode of MODES) {
      const results = await library.searchAll({ query: 'neutron star supernova', mode, top_k: 3 });
      // BM25 finds only the two chunks with these words; dense ranks every chunk.
      assert.equal(results.length, mode === 'bm25' ? 2 : 3, mode);
      // Both astronomy chunks outrank the other spaces' best: one list over all spaces, not each space's ranks.
      assert.deepEqual(results.slice(0, 2).map((r) => r.space), ['sky', 'sky'], mode);
      assert.ok(results.every((r, i) => i === 0 || r.score <= results[i - 1]!.score), mode);
    }
    const named = await library.searchAll({ query: 'neutron star dough tomato', spaces: ['GARDEN', 'kitchen', 'garden'], top_k: 20 });
    assert.deepEqual([...new Set(named.map((r) => r.space))].sort(), ['garden', 'kitchen']);
    const both = await library.searchAll({ query: 'tomato sunlight', mode: 'bm25', top_k: 20 });
    assert.equal(both[0]!.space, 'garden');
    assert.equal(both[0]!.score, 1 / 61);
  });
});

test('concurrent adds of one text make one document', async () => {
  await withLibrary(async (library) => {
    await library.createSpace('kb');
    const outcomes = await Promise.all([library.addDocument('kb', GARDEN), library.addDocument('kb', GARDEN), library.addDocument('kb', GARDEN)]);
    assert.equal(outcomes.filter((o) => o.created).length, 1);
    assert.equal(new Set(outcomes.map((o) => o.document.id)).size, 1);
    assert.equal((await library.getSpace('kb')).document_count, 1);
    assert.equal((await library.getSpace('kb')).chunk_count, 3);
  });
});

test('reindex: a document deleted while re-embedding stays deleted, and the space is stale until the one swap', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-spaces-'));
  try {
    let library = await openSpaceLibrary({ dataDir });
    await library.createSpace('kb');
    await library.addDocument('kb', GARDEN);
    const astronomy = (await library.addDocument('kb', ASTRONOMY)).document;
    await library.close();

    let release = () => {};
    const gate = new Promise<void>((resolve) => { release = resolve; });
    const gated = new (class extends LetterEmbedder {
      override async embed(texts: readonly string[]): Promise<Float32Array[]> {
        await gate;
        return super.embed(texts);
      }
    })();
    library = await openSpaceLibrary({ dataDir, embedder: gated });
    try {
      const reindexing = library.reindex('kb');
      await new Promise((resolve) => setImmediate(resolve));
      await library.deleteDocument('kb', astronomy.id);
      await rejectsWith(library.search('kb', { query: 'tomato', mode: 'dense' }), 409, 'reindex_required');
      assert.equal((await library.search('kb', { query: 'neutron', mode: 'bm25' })).length, 0);
      release();
      const record = await reindexing;
      assert.equal(record.reindex_required, false);
      assert.equal(record.chunk_count, 3);
      const dense = await library.search('kb', { query: 'neutron star pulsar', mode: 'dense', top_k: 10 });
      assert.deepEqual(dense.map((r) => r.title), ['Growing tomatoes', 'Growing tomatoes', 'Growing tomatoes']);
      assertConsistent(dataDir);
    } finally {
      await library.close();
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

const vocabulary = Array.from({ length: 400 }, (_, i) => `w${i.toString(36)}${['', 'ing', 'ed', 's', 'ation'][i % 5]!}`);
const RANDOM_QUERIES = Array.from({ length: 12 }, (_, i) => `${vocabulary[i * 7]!} ${vocabulary[i * 13 + 5]!} ${vocabulary[i * 29 + 1]!}`);

/** `count` documents of `paragraphs` chunks each from a small seeded vocabulary, each chunk with a word of its own (doc3p7). */
function randomDocuments(seed: string, count: number, paragraphs: number): DocumentInput[] {
  const random = seededRandom(seed);
  return Array.from({ length: count }, (_, d) => doc(Array.from({ length: paragraphs }, (_, p) => {
    const words = Array.from({ length: random.int(5, 40) }, () => vocabulary[Math.floor(random.next() ** 2 * vocabulary.length)]!);
    return `doc${d}p${p} ${words.join(' ')}`;
  }).join('\n\n')));
}


async function bm25Ids(library: SpaceLibrary, query: string): Promise<string[]> {
  return (await library.search('kb', { query, mode: 'bm25', top_k: 20 })).map((result) => result.chunk_id);
}

test('search: the full BM25 index ranks as FTS5 did, and writes while it fills land in it', async () => {
  await withLibrary(async (library, dataDir) => {
    await library.createSpace('kb');
    const docs = randomDocuments('library-bm25', 60, 20);
    const ids: string[] = [];
    for (const input of docs) ids.push((await library.addDocument('kb', input)).document.id);
    // No event-loop turn between these searches: the index has not read a chunk, FTS5 answers.
    const fromFts5: string[][] = [];
    for (const query of RANDOM_QUERIES) fromFts5.push(await bm25Ids(library, query));
    await library.warmUp('kb');
    for (const [i, query] of RANDOM_QUERIES.entries()) assert.deepEqual(await bm25Ids(library, query), fromFts5[i], query);
    assert.ok(fromFts5.every((list) => list.length > 0));

    // Another library on the file starts its fill with a search, reads one slice, then writes come.
    const filling = await openSpaceLibrary({ dataDir });
    try {
      await bm25Ids(filling, RANDOM_QUERIES[0]!);
      await new Promise((resolve) => setImmediate(resolve));
      await filling.replaceDocument('kb', ids[0]!, doc('doc0 replaced by w1 and w2ing only'));
      await filling.deleteDocument('kb', ids[59]!);
      await filling.addDocument('kb', doc('a brand new w3ed passage about w5'));
      await filling.warmUp('kb');
      // The same as an index filled from scratch after the writes.
      const fresh = await openSpaceLibrary({ dataDir });
      try {
        await fresh.warmUp('kb');
        for (const query of [...RANDOM_QUERIES, 'w3ed w5', 'w1 w2ing']) assert.deepEqual(await bm25Ids(filling, query), await bm25Ids(fresh, query), query);
      } finally {
        await fresh.close();
      }
      await assertGone(filling, 'kb', ['doc0p3', 'doc59p0', 'doc59p19']);
      assert.match((await filling.search('kb', { query: 'brand new', mode: 'bm25' }))[0]!.text, /brand new/);
    } finally {
      await filling.close();
    }
    assertConsistent(dataDir);
  });
});
