import { test } from 'node:test';
import assert from 'node:assert/strict';
import { marked } from 'marked';
import type { Tokens } from 'marked';
import {
  QUERY_KINDS, QUERY_MIX, addTypo, chunkMarkdown, createNameSource, generateBulkDocuments, generateLabelledSet, verifyLabelledSet,
} from '../../src/spaces/eval/labelled-set.ts';
import type { LabelledSet } from '../../src/spaces/eval/labelled-set.ts';
import { seededRandom } from '../../src/spaces/eval/seeded-random.ts';

const set = generateLabelledSet();

test('the set is the same for the same seed and different for another', () => {
  assert.equal(JSON.stringify(generateLabelledSet({ seed: 1 })), JSON.stringify(set));
  const other = generateLabelledSet({ seed: 2 });
  assert.notEqual(other.documents[0]!.markdown, set.documents[0]!.markdown);
  assert.notDeepEqual(other.queries.map((q) => q.text), set.queries.map((q) => q.text));
});

test('at least 200 queries, every kind in its share of the mix', () => {
  assert.ok(set.queries.length >= 200, `${set.queries.length} queries`);
  for (const kind of QUERY_KINDS) {
    const count = set.queries.filter((q) => q.kind === kind).length;
    assert.ok(Math.abs(count - QUERY_MIX[kind] * set.queries.length) <= 1, `${kind}: ${count} of ${set.queries.length}`);
  }
  assert.equal(new Set(set.queries.map((q) => q.id)).size, set.queries.length);
});

test('documents are markdown with a title and several sections, chunked on headings', () => {
  const domains = new Set(set.documents.map((d) => d.domain));
  assert.ok(domains.size >= 5, [...domains].join(', '));
  for (const doc of set.documents) {
    const headings = marked.lexer(doc.markdown).filter((t): t is Tokens.Heading => t.type === 'heading');
    assert.equal(headings[0]!.depth, 1);
    assert.equal(headings[0]!.text, doc.title);
    assert.ok(headings.filter((h) => h.depth === 2).length >= 4, doc.key);
    const chunks = doc.input.chunks;
    assert.deepEqual(chunks.map((c) => c.position), chunks.map((_, i) => i));
    assert.ok(chunks.every((c) => c.headingPath[0] === doc.title && c.text.length > 0));
    assert.ok(!doc.input.text.includes('## ') && doc.input.text.startsWith(doc.title), 'the text is the extracted text, not the markdown source');
    assert.equal(doc.input.format, 'markdown');
  }
});

test('each answer span is in exactly one document, in the section the query names', () => {
  const byKey = new Map(set.documents.map((d) => [d.key, d]));
  for (const query of set.queries) {
    const holders = set.documents.filter((d) => d.markdown.includes(query.answerSpan));
    assert.deepEqual(holders.map((d) => d.key), [query.documentKey], query.id);
    const doc = byKey.get(query.documentKey)!;
    assert.ok(query.supportingChunks.length > 0, query.id);
    for (const position of query.supportingChunks) {
      const chunk = doc.input.chunks[position]!;
      assert.ok(chunk.text.includes(query.answerSpan));
      // The chunker joins small sections into the chunk above them, so the chunk's path may stop short.
      assert.deepEqual(chunk.headingPath, query.headingPath.slice(0, chunk.headingPath.length), query.id);
    }
    // The answer itself (the value) is never handed to the retriever in the query.
    const fact = doc.facts.find((f) => f.span === query.answerSpan)!;
    assert.ok(!query.text.includes(fact.value), `${query.id} gives the answer away: ${query.text}`);
  }
});

test('siblings in a family share the wording: the distractors are real', () => {
  const families = new Map<string, string[]>();
  for (const doc of set.documents) families.set(doc.family, [...(families.get(doc.family) ?? []), doc.key]);
  for (const [family, keys] of families) assert.ok(keys.length >= 3, `${family} has ${keys.length} documents`);
  // For a query, a sibling document has a chunk under the same heading with the same kind of sentence.
  const query = set.queries.find((q) => q.kind === 'keyword')!;
  const target = set.documents.find((d) => d.key === query.documentKey)!;
  const sibling = set.documents.find((d) => d.family === target.family && d.key !== target.key)!;
  assert.ok(sibling.facts.some((f) => f.key === query.fact && f.span !== query.answerSpan));
});

test('verification fails a set whose answer span is not unique', () => {
  const broken = structuredClone(set) as LabelledSet;
  const query = broken.queries[0]!;
  const other = broken.documents.find((d) => d.key !== query.documentKey)!;
  other.markdown += `\n${query.answerSpan}\n`;
  assert.throws(() => verifyLabelledSet(broken), /answer span of q0001 is in 2 documents/);
  const stale = structuredClone(set) as LabelledSet;
  const replaced = stale.stale.find((c) => c.after !== null)!;
  replaced.after!.markdown += replaced.oldSpans[0]!;
  assert.throws(() => verifyLabelledSet(stale), /old span/);
});

test('the stale cases: half replaced by a revision with every value changed, half deleted', () => {
  assert.ok(set.stale.length >= 6);
  const replaced = set.stale.filter((c) => c.change === 'replaced');
  assert.equal(replaced.length, set.stale.length / 2);
  for (const c of set.stale) {
    assert.ok(c.oldSpans.length >= 5 && c.queries.length === 2 * c.oldSpans.length);
    assert.equal(c.after === null, c.change === 'deleted');
    if (c.after) {
      assert.equal(c.after.key, c.before.key);
      for (const span of c.oldSpans) assert.ok(!c.after.markdown.includes(span));
      // The revision keeps the prose: only the facts' sentences differ.
      const beforeLines = c.before.markdown.split('\n');
      const afterLines = c.after.markdown.split('\n');
      assert.equal(afterLines.length, beforeLines.length);
      assert.deepEqual(c.after.facts.map((f) => f.key), c.before.facts.map((f) => f.key));
    }
    for (const span of c.oldSpans) assert.ok(set.documents.every((d) => !d.markdown.includes(span)));
  }
});

/** Optimal string alignment distance: insertions, deletions, substitutions and adjacent swaps cost 1. */
function editDistance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i]![j] = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i]![j] = Math.min(d[i]![j]!, d[i - 2]![j - 2]! + 1);
    }
  }
  return d[a.length]![b.length]!;
}

test('a typo is one edit in one word of five or more letters', () => {
  const r = seededRandom('typos');
  const text = 'How often should the shaft seal of the Rousdusk KZ-25 booster pump be replaced?';
  for (let i = 0; i < 200; i++) {
    const typo = addTypo(r, text);
    assert.notEqual(typo, text);
    const before = text.split(' ');
    const after = typo.split(' ');
    assert.equal(after.length, before.length);
    const changed = before.map((w, j) => [w, after[j]!] as const).filter(([a, b]) => a !== b);
    assert.equal(changed.length, 1, typo);
    const [a, b] = changed[0]!;
    assert.ok(a.replace(/\W/g, '').length >= 5);
    assert.equal(editDistance(a, b), 1, `${a} -> ${b}`);
  }
  assert.equal(addTypo(r, 'HX-40 fuse'), 'HX-40 fuse', 'no word long enough: unchanged');
});

test('chunkMarkdown goes through extraction and the chunker: headings in the text and the path', () => {
  const long = 'This sentence is here to fill the section up. '.repeat(30);
  const { title, text, chunks } = chunkMarkdown(`# Guide\n\nIntro text.\n\n## Install\n\n${long}\n\n- a\n- b\n\n## Use\n\nRun it.\n`);
  assert.equal(title, 'Guide');
  assert.ok(text.startsWith('Guide\n\nIntro text.\n\nInstall\n\nThis sentence'));
  assert.ok(chunks.length >= 3);
  assert.deepEqual(chunks.map((c) => c.position), chunks.map((_, i) => i));
  assert.deepEqual(chunks[0]!.headingPath, ['Guide']);
  assert.deepEqual(chunks.at(-1)!.headingPath, ['Guide', 'Use']);
  assert.ok(chunks.at(-1)!.text.startsWith('Use'));
  assert.ok(chunks.every((c) => c.text.length <= 1000 && c.page === null));
});

test('names: never one a prefix of another, reserved names are never handed out', () => {
  const names = createNameSource(seededRandom('names'));
  assert.equal(names.claim('Velmora'), true);
  assert.equal(names.claim('velmora'), false);
  assert.equal(names.claim('Velmo'), false, 'a prefix of a claimed name');
  assert.equal(names.claim('Velmoran'), false, 'a claimed name is its prefix');
  const words = Array.from({ length: 3000 }, () => names.word().toLowerCase());
  const sorted = [...words, 'velmora'].sort();
  for (let i = 1; i < sorted.length; i++) assert.ok(!sorted[i]!.startsWith(sorted[i - 1]!), `${sorted[i - 1]} / ${sorted[i]}`);
});

test('bulk documents: same style, deterministic, no labelled name or answer span in them', () => {
  const take = (n: number) => {
    const out = [];
    for (const doc of generateBulkDocuments({ seed: 1, reserved: set.names })) {
      out.push(doc);
      if (out.length === n) break;
    }
    return out;
  };
  const bulk = take(300);
  assert.deepEqual(take(300).map((d) => d.markdown), bulk.map((d) => d.markdown));
  assert.equal(new Set(bulk.map((d) => d.domain)).size, new Set(set.documents.map((d) => d.domain)).size);
  const labelledShorts = new Set(set.documents.map((d) => d.subject.short));
  for (const doc of bulk) assert.ok(!labelledShorts.has(doc.subject.short), doc.key);
  const spans = set.queries.map((q) => q.answerSpan);
  for (const doc of bulk) for (const span of spans) assert.ok(!doc.markdown.includes(span), `${doc.key} holds ${span}`);
});
