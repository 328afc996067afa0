import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { Document, HeadingLevel, Packer, Paragraph, Table, TableCell, TableRow } from 'docx';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { ApiError } from '../../src/shared/api-error.ts';
import { chunkBlocks } from '../../src/spaces/chunk-blocks.ts';
import { extractDocument, extractText, IN_PROCESS_TEXT_BYTES } from '../../src/spaces/extract-document.ts';
import { ExtractionWorker } from '../../src/spaces/extraction-worker.ts';
import type { ExtractedDocument } from '../../src/spaces/space-document.ts';
import { buildZip, deflatedEntry, deflatedZeros, minimalDocxEntries } from './zip-fixtures.ts';

const worker = new ExtractionWorker();
after(() => worker.close());

const utf8 = (text: string) => new TextEncoder().encode(text);
const extract = (bytes: Uint8Array, filename?: string, extra: { contentType?: string; maxBytes?: number } = {}) =>
  extractDocument({ bytes, worker, ...(filename === undefined ? {} : { filename }), ...extra });

/** Asserts `promise` rejects with an ApiError of `code` (and `status`), and returns it. */
async function rejectsWith(promise: Promise<unknown>, code: string, status: number): Promise<ApiError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof ApiError, `an ApiError, got ${String(error)}`);
    assert.equal(error.code, code, error.message);
    assert.equal(error.status, status);
    return error;
  }
  assert.fail(`expected ${code}`);
}

function texts(document: ExtractedDocument): string[] {
  return document.blocks.map((b) => b.text);
}

async function threePagePdf(): Promise<Uint8Array> {
  const pdf = await PDFDocument.create();
  pdf.setTitle('Field Notes');
  const font = await pdf.embedFont(StandardFonts.Helvetica);
  for (let p = 1; p <= 3; p++) {
    const page = pdf.addPage([595, 842]);
    page.drawText(`Chapter ${p}`, { x: 50, y: 780, size: 20, font });
    page.drawText(`Page ${p} opens with this known sentence.`, { x: 50, y: 740, size: 11, font });
    page.drawText(`It continues on a second line of the same paragraph.`, { x: 50, y: 726, size: 11, font });
    page.drawText(`A separate paragraph closes page ${p}.`, { x: 50, y: 690, size: 11, font });
    page.drawText(String(p), { x: 290, y: 30, size: 9, font });
  }
  return pdf.save();
}

test('PDF: pages, headings by size, paragraphs by line gaps, title from metadata; page numbers dropped', async () => {
  const document = await extract(await threePagePdf(), 'notes.pdf');
  assert.equal(document.format, 'pdf');
  assert.equal(document.title, 'Field Notes');
  assert.equal(document.pages, 3);
  const expected = [1, 2, 3].flatMap((p) => [
    { kind: 'heading', level: 1, text: `Chapter ${p}`, page: p },
    { kind: 'paragraph', text: `Page ${p} opens with this known sentence. It continues on a second line of the same paragraph.`, page: p },
    { kind: 'paragraph', text: `A separate paragraph closes page ${p}.`, page: p },
  ]);
  assert.deepEqual(document.blocks, expected);
  const chunks = chunkBlocks(document.blocks);
  assert.deepEqual(chunks.map((c) => [c.page, c.headingPath]), [[1, ['Chapter 1']], [2, ['Chapter 2']], [3, ['Chapter 3']]]);
});

test('PDF hostile: truncated, random bytes behind a %PDF- header, a text file named .pdf, no text layer', async () => {
  const pdf = await threePagePdf();
  await rejectsWith(extract(pdf.subarray(0, 200), 'cut.pdf'), 'document_unreadable', 422);
  await rejectsWith(extract(Buffer.concat([Buffer.from('%PDF-1.7\n'), randomBytes(4096)]), 'noise.pdf'), 'document_unreadable', 422);
  const mismatch = await rejectsWith(extract(utf8('just some text, honestly'), 'fake.pdf'), 'document_type_mismatch', 415);
  assert.match(mismatch.message, /not a PDF/);
  const blank = await PDFDocument.create();
  blank.addPage();
  const empty = await rejectsWith(extract(await blank.save(), 'scan.pdf'), 'document_empty', 422);
  assert.match(empty.message, /OCR/);
});

test('DOCX: headings, paragraphs, lists, tables and the title from its properties', async () => {
  const cell = (text: string) => new TableCell({ children: [new Paragraph(text)] });
  const docx = new Document({
    title: 'Quarterly Report',
    sections: [{
      children: [
        new Paragraph({ text: 'Overview', heading: HeadingLevel.HEADING_1 }),
        new Paragraph({ text: 'Revenue grew & costs fell in the quarter.' }),
        new Paragraph({ text: 'Details', heading: HeadingLevel.HEADING_2 }),
        new Paragraph({ text: 'Hire two engineers', bullet: { level: 0 } }),
        new Paragraph({ text: 'Ship the beta', bullet: { level: 0 } }),
        new Table({ rows: [new TableRow({ children: [cell('Region'), cell('Sales')] }), new TableRow({ children: [cell('North'), cell('42')] })] }),
      ],
    }],
  });
  const document = await extract(await Packer.toBuffer(docx), 'report.docx');
  assert.equal(document.format, 'docx');
  assert.equal(document.title, 'Quarterly Report');
  assert.deepEqual(document.blocks, [
    { kind: 'heading', level: 1, text: 'Overview' },
    { kind: 'paragraph', text: 'Revenue grew & costs fell in the quarter.' },
    { kind: 'heading', level: 2, text: 'Details' },
    { kind: 'list', text: '- Hire two engineers\n- Ship the beta' },
    { kind: 'table', text: 'Region | Sales\nNorth | 42' },
  ]);
  // Details is a subsection of Overview and the whole document fits one chunk.
  const chunks = chunkBlocks(document.blocks);
  assert.deepEqual(chunks.map((c) => c.headingPath), [['Overview']]);
  assert.ok(chunks[0]!.text.includes('Details\n\n- Hire two engineers'));
});

test('DOCX hostile: a zip bomb is refused from its claims, a lying header as soon as it inflates past them', async () => {
  // 200 MiB of zeros deflate to about 200 KiB: the central directory says so, honestly.
  const zeros = deflatedZeros(200);
  const bomb = buildZip([...minimalDocxEntries(['A small document.']), { name: 'word/padding.xml', data: zeros.data, method: 8, crc: zeros.crc, uncompressedSize: zeros.size }]);
  assert.ok(bomb.length < 300_000);
  const refused = await rejectsWith(extract(bomb, 'bomb.docx'), 'document_expands_too_far', 413);
  assert.match(refused.message, /unpacks to more than/);
  // The same zeros behind a header that claims 1 KiB: only inflating finds the lie, and stops at it.
  const liar = buildZip([...minimalDocxEntries(['A small document.']), { name: 'word/styles.xml', data: deflatedZeros(64).data, method: 8, crc: 0, uncompressedSize: 1024 }]);
  const caught = await rejectsWith(extract(liar, 'liar.docx'), 'document_expands_too_far', 413);
  assert.match(caught.message, /more than its header declares/);
  // A zip that is not a Word document, and a corrupt one.
  await rejectsWith(extract(buildZip([deflatedEntry('notes.txt', 'hello')]), 'archive.docx'), 'document_type_mismatch', 415);
  await rejectsWith(extract(buildZip([deflatedEntry('xl/workbook.xml', '<workbook/>')]), 'sheet.xlsx'), 'unsupported_document_type', 415);
  const good = buildZip(minimalDocxEntries(['Readable text.']));
  await rejectsWith(extract(good.subarray(0, good.length - 30), 'cut.docx'), 'document_unreadable', 422);
  assert.deepEqual(texts(await extract(good, 'ok.docx')), ['Readable text.']);
});

test('HTML: title, headings, paragraphs, lists, code, tables; scripts, styles and navigation dropped; entities decoded', async () => {
  const html = `<!doctype html><html><head><title>The  Page &amp; Title</title><style>p{color:red}</style><script>alert("x")</script></head>
    <body><nav><a href="/">Home</a> | <a href="/about">About</a></nav>
    <h1>Main heading</h1><p>First paragraph with <b>bold</b> and <a href="#">a link</a> &mdash; done.</p>
    <div>Loose text in a div<br>on two lines</div>
    <ul><li>One</li><li>Two<ul><li>Two point one</li></ul></li></ul>
    <ol start="3"><li>Third step</li><li>Fourth step</li></ol>
    <h2>Code &lt;here&gt;</h2><pre><code>const a = 1;
  if (a &lt; 2) run();</code></pre>
    <table><thead><tr><th>Name</th><th>Age</th></tr></thead><tbody><tr><td>Ada</td><td>36</td></tr><tr><td>Alan</td><td>41</td></tr></tbody></table>
    <noscript>Enable JS</noscript><template><p>hidden</p></template></body></html>`;
  const document = await extract(utf8(html), 'page.html');
  assert.equal(document.title, 'The Page & Title');
  assert.deepEqual(document.blocks, [
    { kind: 'heading', level: 1, text: 'Main heading' },
    { kind: 'paragraph', text: 'First paragraph with bold and a link — done.' },
    { kind: 'paragraph', text: 'Loose text in a div\non two lines' },
    { kind: 'list', text: '- One\n- Two\n  - Two point one' },
    { kind: 'list', text: '3. Third step\n4. Fourth step' },
    { kind: 'heading', level: 2, text: 'Code <here>' },
    { kind: 'code', text: 'const a = 1;\n  if (a < 2) run();' },
    { kind: 'table', text: 'Name | Age\nAda | 36\nAlan | 41', headerRows: 1 },
  ]);
});

test('Markdown: a leading # Title is the title; headings, lists, code, tables, quotes; inline markup as plain text', async () => {
  const markdown = [
    '# Handbook', '', 'Welcome to the **handbook** &amp; [its index](https://example.com).', '',
    '## Setup', '', '- [x] install `svc`', '- configure', '  1. edit the file', '', '> Quoted advice.', '',
    '```sh', 'svc serve --port 8080', '```', '', '| Key | Value |', '|-----|-------|', '| a   | 1     |', '',
    '<details><summary>More</summary>Hidden detail text.</details>', '',
  ].join('\n');
  const document = await extract(utf8(markdown), 'handbook.md');
  assert.equal(document.format, 'markdown');
  assert.equal(document.title, 'Handbook');
  assert.deepEqual(document.blocks, [
    { kind: 'heading', level: 1, text: 'Handbook' },
    { kind: 'paragraph', text: 'Welcome to the handbook & its index.' },
    { kind: 'heading', level: 2, text: 'Setup' },
    { kind: 'list', text: '- [x] install svc\n- configure\n  1. edit the file' },
    { kind: 'paragraph', text: 'Quoted advice.' },
    { kind: 'code', text: 'svc serve --port 8080' },
    { kind: 'table', text: 'Key | Value\na | 1', headerRows: 1 },
    { kind: 'paragraph', text: 'More' },
    { kind: 'paragraph', text: 'Hidden detail text.' },
  ]);
  // Posted as a JSON body's text: the same extractor, no file around it.
  assert.deepEqual(extractText(markdown, 'markdown'), document);
});

test('CSV: one table whose header repeats atop every chunk; ; and tab delimiters; a broken file is refused', async () => {
  const rows = Array.from({ length: 200 }, (_, i) => `person ${i},"City, ${i}",${i * 3}`);
  const document = await extract(utf8(`name,city,score\r\n${rows.join('\r\n')}\r\n`), 'people.csv');
  assert.equal(document.blocks.length, 1);
  assert.equal(document.blocks[0]!.headerRows, 1);
  const lines = document.blocks[0]!.text.split('\n');
  assert.equal(lines[0], 'name | city | score');
  assert.equal(lines[1], 'person 0 | City, 0 | 0');
  const chunks = chunkBlocks(document.blocks);
  assert.ok(chunks.length >= 5);
  for (const chunk of chunks) assert.ok(chunk.text.startsWith('name | city | score\n'));
  assert.ok(chunks.slice(1).every((c) => c.overlapChars === 'name | city | score\n'.length));
  assert.ok(chunks.map((c) => c.text.slice(c.overlapChars)).join('\n') === lines.join('\n'), 'every row once, in order');
  assert.deepEqual(texts(extractText('a;b\n1;2\n', 'csv')), ['a | b\n1 | 2']);
  assert.deepEqual(texts(extractText('a\tb\n1\t2\n', 'csv')), ['a | b\n1 | 2']);
  await rejectsWith(extract(utf8('a,b\n"unclosed,2\n'), 'bad.csv'), 'document_unreadable', 422);
  await rejectsWith(extract(utf8('a,b\n1,2,3\n'), 'ragged.csv'), 'document_unreadable', 422);
});

test('JSON: key paths per top-level entry, a block per record; deep or invalid JSON refused; __proto__ is just a key', async () => {
  const json = JSON.stringify({ name: 'svc', engines: { node: '>=24' }, authors: [{ name: 'Ada', langs: ['en', 'fr'] }, { name: 'Alan' }], tags: ['a', 'b'] });
  const document = await extract(utf8(json), 'package.json');
  assert.deepEqual(texts(document), ['name: svc', 'engines.node: >=24', 'authors[0].name: Ada\nauthors[0].langs[0]: en\nauthors[0].langs[1]: fr', 'authors[1].name: Alan', 'tags[0]: a\ntags[1]: b']);
  assert.deepEqual(texts(extractText('[{"id":1,"title":"One"},{"id":2,"title":"Two"}]', 'json')), ['id: 1\ntitle: One', 'id: 2\ntitle: Two']);
  assert.deepEqual(texts(extractText('{"__proto__":{"polluted":true},"a b":1}', 'json')), ['__proto__.polluted: true', '["a b"]: 1']);
  assert.equal(({} as Record<string, unknown>).polluted, undefined);
  await rejectsWith(extract(utf8('{"a": [1, 2'), 'broken.json'), 'document_unreadable', 422);
  assert.throws(() => extractText('{"a": [1, 2', 'json'), (e: unknown) => e instanceof ApiError && e.code === 'document_unreadable' && e.param === 'text');
  await rejectsWith(extract(utf8('['.repeat(100_000)), 'deep.json'), 'document_unreadable', 422);
});

test('Text: paragraphs on blank lines, line breaks kept, no heading guessed; UTF-16 and Windows-1252 decoded', async () => {
  const text = 'INTRODUCTION\nThe first paragraph,\nover two lines.\r\n\r\n   \nThe second paragraph.\n';
  const document = await extract(utf8(text), 'notes.txt');
  assert.deepEqual(document, { format: 'text', blocks: [{ kind: 'paragraph', text: 'INTRODUCTION\nThe first paragraph,\nover two lines.' }, { kind: 'paragraph', text: 'The second paragraph.' }] });
  const utf16 = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('Grüße aus Köln.', 'utf16le')]);
  assert.deepEqual(texts(await extract(utf16, 'gruss.txt')), ['Grüße aus Köln.']);
  assert.deepEqual(texts(await extract(Buffer.from([0x43, 0x61, 0x66, 0xe9, 0x20, 0x80, 0x35]), 'legacy.txt')), ['Café €5']);
  // No name and no type: text that decodes is read as text; an unknown extension too.
  assert.deepEqual(texts(await extract(utf8('plain words'))), ['plain words']);
  assert.deepEqual(texts(await extract(utf8('fn main() {}'), 'main.rs')), ['fn main() {}']);
  assert.equal((await extract(utf8('# Title\n\nBody.'), undefined, { contentType: 'text/markdown; charset=utf-8' })).format, 'markdown');
});

test('large text files are read on the worker and come back the same', async () => {
  const paragraph = 'A sentence that repeats to make a large file. '.repeat(20);
  const big = Array.from({ length: Math.ceil(IN_PROCESS_TEXT_BYTES / paragraph.length) + 10 }, () => paragraph.trim()).join('\n\n');
  const document = await extract(utf8(big), 'big.txt');
  assert.deepEqual(document, extractText(big, 'text', 'file'));
});

test('refused uploads: empty, blank, images, executables, archives, oversized, bad names, a PDF named .docx', async () => {
  await rejectsWith(extract(new Uint8Array(0), 'empty.txt'), 'document_empty', 422);
  await rejectsWith(extract(utf8(' \n\t\n'), 'blank.md'), 'document_empty', 422);
  await rejectsWith(extract(utf8('<html><script>only()</script></html>'), 'script.html'), 'document_empty', 422);
  const png = await rejectsWith(extract(Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex'), 'photo.png'), 'unsupported_document_type', 415);
  assert.match(png.message, /PNG image/);
  await rejectsWith(extract(Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex'), 'photo.txt'), 'unsupported_document_type', 415);
  const elf = await rejectsWith(extract(Buffer.concat([Buffer.from([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0]), randomBytes(64)]), 'tool'), 'unsupported_document_type', 415);
  assert.match(elf.message, /ELF/);
  await rejectsWith(extract(Buffer.concat([utf8('text then '), Buffer.alloc(16), utf8(' binary')]), 'mixed.txt'), 'unsupported_document_type', 415);
  await rejectsWith(extract(utf8('hello'), 'old.doc'), 'unsupported_document_type', 415);
  await rejectsWith(extract(await threePagePdf(), 'report.docx'), 'document_type_mismatch', 415);
  // A content type is a weaker word than the bytes: a PDF posted as text/plain is read as the PDF it is.
  assert.equal((await extract(await threePagePdf(), undefined, { contentType: 'text/plain' })).format, 'pdf');
  await rejectsWith(extract(utf8('not a pdf'), undefined, { contentType: 'application/pdf' }), 'document_type_mismatch', 415);
  const large = await rejectsWith(extract(utf8('x'.repeat(2048)), 'big.txt', { maxBytes: 1024 }), 'document_too_large', 413);
  assert.match(large.message, /2048 bytes; at most 1024/);
  await rejectsWith(extract(utf8('hello'), '../../etc/passwd'), 'invalid_filename', 400);
  await rejectsWith(extract(utf8('hello'), 'C:\\Users\\me\\notes.txt'), 'invalid_filename', 400);
  await rejectsWith(extract(utf8('hello'), 'notes\u0000.txt'), 'invalid_filename', 400);
  // Text that happens to start like a binary signature is still text.
  assert.deepEqual(texts(await extract(utf8('MZ is how the story starts.'), 'story.txt')), ['MZ is how the story starts.']);
  assert.deepEqual(texts(await extract(utf8('Quoting a header: %PDF-1.7 is how PDFs start.'), 'about.md')), ['Quoting a header: %PDF-1.7 is how PDFs start.']);
  assert.throws(() => extractText('%PDF-1.7', 'pdf'), (e: unknown) => e instanceof ApiError && e.code === 'unsupported_document_type');
});

test('a heading too long to be one (markdown, HTML, DOCX through HTML) is a paragraph, so no passage repeats it in its heading path', () => {
  const long = 'long heading words '.repeat(2_000).trim();
  const body = 'Body sentence here. '.repeat(5_000);
  for (const [text, format] of [[`# ${long}\n\n${body}`, 'markdown'], [`<h1>${long}</h1><p>${body}</p>`, 'html']] as const) {
    const document = extractText(text, format);
    assert.equal(document.blocks[0]!.kind, 'paragraph', format);
    assert.equal(document.title, undefined, format);
    const chunks = chunkBlocks(document.blocks);
    const stored = chunks.reduce((sum, c) => sum + c.text.length + c.headingPath.join('').length, 0);
    // Today's text, stored about once: a 38 KB heading over every passage would be ~100 times that.
    assert.ok(stored < 2 * (long.length + body.length), `${format}: ${stored} characters stored for ${long.length + body.length}`);
  }
  assert.equal(extractText(`# ${'short '.repeat(80).trim()}\n\ntext`, 'markdown').blocks[0]!.kind, 'heading');
});

test('plain text in a JSON body is read in the daemon only when small; larger text goes to the extraction process', async () => {
  const { extractBodyText } = await import('../../src/spaces/extract-document.ts');
  const sent: number[] = [];
  const worker = {
    maxTextBytes: 64 * 1024 * 1024,
    runText: async (_format: string, text: string) => {
      sent.push(text.length);
      return { format: 'text' as const, blocks: [{ kind: 'paragraph' as const, text: 'from the process' }] };
    },
  };
  const small = await extractBodyText('a few words', 'text', { worker: worker as never });
  assert.equal(small.blocks[0]?.text, 'a few words');
  const large = 'word '.repeat(IN_PROCESS_TEXT_BYTES / 5 + 10);
  const read = await extractBodyText(large, 'text', { worker: worker as never });
  assert.equal(read.blocks[0]?.text, 'from the process');
  // Dense text: fewer UTF-16 units than the bound, more bytes.
  const dense = '語'.repeat(Math.ceil(IN_PROCESS_TEXT_BYTES / 3) + 10);
  await extractBodyText(dense, 'text', { worker: worker as never });
  assert.deepEqual(sent, [large.length, dense.length]);
});
