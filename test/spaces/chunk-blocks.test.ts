import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { chunkBlocks, type ChunkDraftWithOverlap } from '../../src/spaces/chunk-blocks.ts';
import type { DocumentBlock } from '../../src/spaces/space-document.ts';
import { ApiError } from '../../src/shared/api-error.ts';
import { MAX_HEADING_CHARS } from '../../src/spaces/extraction-limits.ts';

const strip = (text: string) => text.replace(/\s+/gu, '');

const sentence = (topic: string, i: number) => `The ${topic} note ${i} explains one idea in a few plain words.`;
const paragraph = (topic: string, count: number) => Array.from({ length: count }, (_, i) => sentence(topic, i)).join(' ');

test('chunking: sections start chunks, heading paths are outermost first, pages are where a chunk starts', () => {
  const blocks: DocumentBlock[] = [
    { kind: 'heading', level: 1, text: 'Guide', page: 1 },
    { kind: 'paragraph', text: paragraph('intro', 2), page: 1 },
    { kind: 'heading', level: 2, text: 'Install', page: 1 },
    { kind: 'paragraph', text: paragraph('install', 30), page: 2 },
    { kind: 'heading', level: 3, text: 'On Linux', page: 3 },
    { kind: 'paragraph', text: 'Run the installer.', page: 3 },
    { kind: 'heading', level: 2, text: 'Usage', page: 4 },
    { kind: 'paragraph', text: paragraph('usage', 3), page: 4 },
  ];
  const chunks = chunkBlocks(blocks);
  assert.deepEqual(chunks.map((c) => c.position), chunks.map((_, i) => i));
  assert.deepEqual(chunks[0]!.headingPath, ['Guide']);
  assert.ok(chunks[0]!.text.startsWith('Guide\n\nThe intro note 0'));
  // The Install section's long paragraph spans several chunks, all under Guide > Install.
  const install = chunks.filter((c) => c.text.includes('install note'));
  assert.ok(install.length >= 2);
  for (const chunk of install) assert.deepEqual(chunk.headingPath, ['Guide', 'Install']);
  assert.equal(install[0]!.page, 1, 'the chunk starts with the Install heading, on page 1');
  assert.equal(install[1]!.page, 2);
  // Usage is a sibling section: it never shares a chunk with Install's text.
  const usage = chunks.find((c) => c.text.includes('Usage'))!;
  assert.ok(usage.text.startsWith('Usage\n\n'));
  assert.deepEqual(usage.headingPath, ['Guide', 'Usage']);
  assert.equal(usage.page, 4);
  assert.ok(!usage.text.includes('install note') && !usage.text.includes('Run the installer'));
  // The small subsection is on a page of its own, so it starts a chunk of its own there (a
  // citation names one page).
  const linux = chunks.find((c) => c.text.includes('Run the installer.'))!;
  assert.ok(linux.text.startsWith('On Linux\n\nRun the installer.'));
  assert.deepEqual(linux.headingPath, ['Guide', 'Install', 'On Linux']);
  assert.equal(linux.page, 3);
  for (const chunk of chunks) assert.ok(chunk.text.length <= 1000);
});

test('chunking: a chunk that continues prose starts with the previous end, from a sentence start', () => {
  const chunks = chunkBlocks([{ kind: 'paragraph', text: paragraph('overlap', 40) }], { targetChars: 500, overlapChars: 120 });
  assert.ok(chunks.length >= 3);
  for (const [i, chunk] of chunks.entries()) {
    if (i === 0) {
      assert.equal(chunk.overlapChars, 0);
      continue;
    }
    assert.ok(chunk.overlapChars > 0 && chunk.overlapChars <= 121);
    const overlap = chunk.text.slice(0, chunk.overlapChars).trim();
    assert.ok(chunks[i - 1]!.text.endsWith(overlap), `chunk ${i} repeats the end of chunk ${i - 1}`);
    assert.match(overlap, /^The overlap note \d+/);
    assert.match(chunks[i - 1]!.text, /\.$/, 'prose is cut at a sentence end');
  }
});

test('chunking: no overlap is carried across a heading', () => {
  const chunks = chunkBlocks([
    { kind: 'paragraph', text: paragraph('first', 12) },
    { kind: 'heading', level: 1, text: 'Second' },
    { kind: 'paragraph', text: paragraph('second', 3) },
  ], { targetChars: 400 });
  const second = chunks.find((c) => c.headingPath[0] === 'Second')!;
  assert.equal(second.overlapChars, 0);
  assert.ok(second.text.startsWith('Second\n\n'));
});

test('chunking: a big table repeats its header atop each chunk; code and rows are never cut mid-line', () => {
  const rows = Array.from({ length: 80 }, (_, i) => `row ${i} | value ${i * 7} | note`);
  const table: DocumentBlock = { kind: 'table', text: ['name | value | comment', ...rows].join('\n'), headerRows: 1 };
  const code: DocumentBlock = { kind: 'code', text: Array.from({ length: 60 }, (_, i) => `  const line${i} = compute(${i});`).join('\n') };
  const chunks = chunkBlocks([table, code], { targetChars: 400 });
  const tableChunks = chunks.filter((c) => c.text.includes('row '));
  assert.ok(tableChunks.length >= 3);
  for (const chunk of tableChunks) {
    assert.ok(chunk.text.startsWith('name | value | comment\n'), 'every table chunk names its columns');
    for (const line of chunk.text.split('\n')) {
      if (line.startsWith('row ')) assert.ok(rows.includes(line), `a whole row: ${line}`);
    }
  }
  const codeLines = new Set(code.text.split('\n'));
  for (const chunk of chunks.filter((c) => c.text.includes('compute('))) {
    for (const line of chunk.text.split('\n')) if (line.includes('compute(')) assert.ok(codeLines.has(line), `a whole line, indentation kept: ${line}`);
  }
});

test('chunking: a single line longer than a chunk is cut hard, never past the target', () => {
  const long = 'x'.repeat(2500);
  const chunks = chunkBlocks([{ kind: 'code', text: long }], { targetChars: 1000 });
  assert.ok(chunks.every((c) => c.text.length <= 1000));
  assert.equal(chunks.map((c) => c.text.slice(c.overlapChars)).join(''), long);
});

test('chunking: empty documents give no chunks; bad options are a 400', () => {
  assert.deepEqual(chunkBlocks([]), []);
  assert.deepEqual(chunkBlocks([{ kind: 'paragraph', text: '  \n ' }]), []);
  assert.throws(() => chunkBlocks([], { targetChars: 10 }), (e: unknown) => e instanceof ApiError && e.status === 400 && e.code === 'invalid_chunk_options');
  assert.throws(() => chunkBlocks([], { targetChars: 400, overlapChars: 300 }), (e: unknown) => e instanceof ApiError && e.code === 'invalid_chunk_options');
});

// ---- Properties over generated documents ----

const word = fc.constantFrom('alpha', 'beta', 'gamma', 'delta', 'river', 'stone', 'code', 'x', 'ünïcode', '日本語', '😀', 'well-known', '3.14', 'e.g.');
const prose = fc
  .array(fc.array(word, { minLength: 1, maxLength: 30 }).map((ws) => `${ws.join(' ')}.`), { minLength: 1, maxLength: 12 })
  .map((sentences) => sentences.join(' '));
const oddText = fc.oneof(
  prose,
  fc.string({ unit: 'binary', maxLength: 300 }),
  fc.integer({ min: 1, max: 1500 }).map((n) => 'y'.repeat(n)),
);
const lines = (prefix: string) => fc.array(fc.oneof(prose.map((p) => p.slice(0, 120)), fc.integer({ min: 1, max: 1200 }).map((n) => 'z'.repeat(n))), { minLength: 1, maxLength: 30 }).map((ls) => ls.map((l, i) => `${prefix}${i} ${l}`.trimEnd()));
const block: fc.Arbitrary<DocumentBlock> = fc.oneof(
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('heading' as const), level: fc.integer({ min: 1, max: 4 }), text: fc.oneof({ weight: 5, arbitrary: fc.array(word, { minLength: 1, maxLength: 5 }).map((ws) => ws.join(' ')) }, { weight: 1, arbitrary: prose }) }) },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('paragraph' as const), text: oddText }) },
  { weight: 1, arbitrary: lines('- item ').map((ls) => ({ kind: 'list' as const, text: ls.join('\n') })) },
  { weight: 1, arbitrary: lines('    code ').map((ls) => ({ kind: 'code' as const, text: ls.join('\n') })) },
  { weight: 1, arbitrary: fc.tuple(lines('r'), fc.boolean()).map(([ls, header]) => ({ kind: 'table' as const, text: ['col a | col b', ...ls].join('\n'), ...(header ? { headerRows: 1 } : {}) })) },
);
const documentBlocks = fc.array(fc.tuple(block, fc.integer({ min: 0, max: 1 })), { maxLength: 25 }).map((pairs) => {
  let page = 1;
  return pairs.map(([b, turn]) => ({ ...b, page: (page += turn) }));
});
const options = fc.record({ targetChars: fc.integer({ min: 200, max: 1500 }), overlapChars: fc.integer({ min: 0, max: 100 }) });

interface Expected {
  /** Start of each non-empty block in the whitespace-free concatenation. */
  starts: number[];
  /** The heading path in force at each block (for a heading: after it). */
  paths: string[][];
  levels: number[];
}

function outline(blocks: DocumentBlock[]): Expected {
  const stack: { text: string; level: number }[] = [];
  const starts: number[] = [];
  const paths: string[][] = [];
  const levels: number[] = [];
  let offset = 0;
  for (const b of blocks) {
    starts.push(offset);
    offset += strip(b.text).length;
    if (b.kind === 'heading' && b.text.trim() !== '') {
      while (stack.length > 0 && stack.at(-1)!.level >= b.level!) stack.pop();
      stack.push({ text: b.text.replace(/\s+/gu, ' ').trim(), level: b.level! });
    }
    paths.push(stack.map((h) => h.text));
    levels.push(stack.at(-1)?.level ?? 0);
  }
  return { starts, paths, levels };
}

/** The block a whitespace-free offset falls in (blocks with no text hold no offset). */
function blockAt(blocks: DocumentBlock[], expected: Expected, offset: number): number {
  for (let i = 0; i < blocks.length; i++) if (strip(blocks[i]!.text).length > 0 && expected.starts[i]! + strip(blocks[i]!.text).length > offset) return i;
  return -1;
}

function checkChunks(blocks: DocumentBlock[], target: number, overlap: number, chunks: ChunkDraftWithOverlap[]): void {
  const all = blocks.map((b) => strip(b.text)).join('');
  // Sizes and positions.
  for (const [i, chunk] of chunks.entries()) {
    assert.equal(chunk.position, i);
    assert.ok(chunk.text.length <= target, `chunk ${i} is ${chunk.text.length} > ${target}`);
    assert.ok(strip(chunk.text.slice(chunk.overlapChars)).length > 0, `chunk ${i} has text of its own`);
  }
  // Coverage: the chunks' own text, in order, is every block's text, once.
  assert.equal(chunks.map((c) => strip(c.text.slice(c.overlapChars))).join(''), all);
  const expected = outline(blocks);
  let offset = 0;
  for (const [i, chunk] of chunks.entries()) {
    const own = strip(chunk.text.slice(chunk.overlapChars));
    // The overlap repeats text that came before (the previous chunk's end, or a table header).
    const repeated = strip(chunk.text.slice(0, chunk.overlapChars));
    if (repeated !== '') assert.ok(all.slice(0, offset).includes(repeated), `chunk ${i}'s overlap repeats earlier text`);
    const first = blockAt(blocks, expected, offset);
    // A chunk opening with headings is under all of them; otherwise under the outline where its text starts.
    let pathBlock = first;
    if (blocks[first]!.kind === 'heading') {
      while (pathBlock + 1 < blocks.length && (blocks[pathBlock + 1]!.kind === 'heading' || strip(blocks[pathBlock + 1]!.text) === '')) pathBlock++;
    }
    const path = blocks[first]!.kind === 'heading' ? expected.paths[pathBlock]! : first === 0 ? [] : expected.paths[first - 1]!;
    assert.deepEqual(chunk.headingPath, path, `chunk ${i}'s heading path`);
    assert.equal(chunk.page, blocks[first]!.page, `chunk ${i}'s page`);
    // Sections: a heading inside a chunk (after its start) is deeper than the chunk's section.
    const level = path.length === 0 ? 0 : blocks[first]!.kind === 'heading' ? expected.levels[pathBlock]! : expected.levels[first - 1]!;
    let seenBody = blocks[first]!.kind !== 'heading';
    for (let b = first + 1; b < blocks.length && expected.starts[b]! < offset + own.length; b++) {
      if (strip(blocks[b]!.text) === '') continue;
      if (blocks[b]!.kind !== 'heading') seenBody = true;
      else if (seenBody) assert.ok(level > 0 && blocks[b]!.level! > level, `chunk ${i} crosses a heading of level ${blocks[b]!.level} in a level-${level} section`);
    }
    offset += own.length;
  }
  // Lines of code and tables that fit half a chunk are never cut.
  const chunkLines = new Set(chunks.flatMap((c) => c.text.split('\n')));
  for (const b of blocks) {
    if (b.kind !== 'code' && b.kind !== 'table') continue;
    for (const line of b.text.split('\n')) if (line.length <= target / 2 - 2 && line.trim() !== '') assert.ok(chunkLines.has(line), `line kept whole: ${line.slice(0, 40)}`);
  }
  void overlap;
}

test('chunking properties: size bound, full coverage in order, heading paths, pages, sections, whole lines', () => {
  fc.assert(
    fc.property(documentBlocks, options, (blocks, { targetChars, overlapChars }) => {
      // A heading longer than MAX_HEADING_CHARS is read as a paragraph: the model reads it so too.
      const asRead = blocks.map((b): DocumentBlock => (b.kind === 'heading' && b.text.length > MAX_HEADING_CHARS ? { kind: 'paragraph', text: b.text, page: b.page } : b));
      checkChunks(asRead, targetChars, overlapChars, chunkBlocks(blocks, { targetChars, overlapChars }));
    }),
    { numRuns: 300 },
  );
});

test('a heading longer than any real one (a PDF line in a large font, say) is chunked as a paragraph, not repeated in every heading path', () => {
  const long = 'Loud '.repeat(200).trim();
  const chunks = chunkBlocks([
    { kind: 'heading', level: 1, text: long, page: 1 },
    { kind: 'paragraph', text: 'First body paragraph.', page: 1 },
    { kind: 'paragraph', text: 'Second body paragraph.', page: 2 },
  ], { targetChars: 400, overlapChars: 0 });
  assert.ok(chunks.length >= 2);
  for (const chunk of chunks) assert.deepEqual(chunk.headingPath, []);
  assert.ok(chunks.some((c) => c.text.includes('Loud Loud')));
});
