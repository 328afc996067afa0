/**
 * What reading documents into a knowledge space costs, per format, on generated files of
 * realistic size: extraction (bytes → blocks, on the extraction worker as extractDocument runs
 * it) and chunking (blocks → chunks). Each case runs `--rounds` times on a warm worker after one
 * cold run (worker start and parser load included); figures are medians. Also: how fast a zip
 * bomb is refused, and how much the process grows refusing it.
 *
 * Usage: node bench/spaces-extract.ts [--rounds 5] [--json]
 */
import { parseArgs } from 'node:util';
import { Document, HeadingLevel, Packer, Paragraph } from 'docx';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { chunkBlocks } from '../src/spaces/chunk-blocks.ts';
import { extractDocument } from '../src/spaces/extract-document.ts';
import { ExtractionWorker } from '../src/spaces/extraction-worker.ts';
import { buildZip, deflatedZeros, minimalDocxEntries } from '../test/spaces/zip-fixtures.ts';

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '5' }, json: { type: 'boolean', default: false } } });
const rounds = Number(values.rounds);

const words = ['river', 'stone', 'index', 'search', 'vector', 'chunk', 'model', 'local', 'space', 'paper', 'note', 'fusion', 'rank', 'query'];
let seed = 7;
const next = () => (seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32;
const sentence = () => {
  const n = 8 + Math.floor(next() * 14);
  const s = Array.from({ length: n }, () => words[Math.floor(next() * words.length)]!).join(' ');
  return `${s[0]!.toUpperCase()}${s.slice(1)}.`;
};
const paragraph = (sentences: number) => Array.from({ length: sentences }, sentence).join(' ');

async function pdfOf(pages: number): Promise<Uint8Array> {
  const pdf = await PDFDocument.create();
  const font = await pdf.embedFont(StandardFonts.Helvetica);
  for (let p = 0; p < pages; p++) {
    const page = pdf.addPage([595, 842]);
    page.drawText(`Section ${p + 1}`, { x: 50, y: 790, size: 18, font });
    let y = 760;
    while (y > 60) {
      for (let line = 0; line < 5 && y > 60; line++, y -= 14) page.drawText(paragraph(1).slice(0, 95), { x: 50, y, size: 11, font });
      y -= 14;
    }
  }
  return pdf.save();
}

async function docxOf(sections: number): Promise<Uint8Array> {
  const children = [];
  for (let s = 0; s < sections; s++) {
    children.push(new Paragraph({ text: `Section ${s + 1}`, heading: HeadingLevel.HEADING_1 }));
    for (let p = 0; p < 5; p++) children.push(new Paragraph({ text: paragraph(5) }));
  }
  return Packer.toBuffer(new Document({ sections: [{ children }] }));
}

function markdownOf(bytes: number): string {
  const parts: string[] = [];
  let size = 0;
  for (let s = 1; size < bytes; s++) {
    const part = `## Section ${s}\n\n${paragraph(6)}\n\n- ${sentence()}\n- ${sentence()}\n\n\`\`\`\ncode line ${s}\n\`\`\`\n\n${paragraph(4)}\n\n`;
    parts.push(part);
    size += part.length;
  }
  return `# Big document\n\n${parts.join('')}`;
}

const htmlOf = (bytes: number) => `<html><head><title>Big</title></head><body>${markdownOf(bytes).split('\n\n').map((p) => (p.startsWith('## ') ? `<h2>${p.slice(3)}</h2>` : `<p>${p}</p>`)).join('\n')}</body></html>`;
const csvOf = (rows: number) => ['id,name,city,score,comment', ...Array.from({ length: rows }, (_, i) => `${i},person ${i},"City, ${i % 97}",${(i * 37) % 1000},${sentence()}`)].join('\n');
const jsonOf = (records: number) => JSON.stringify(Array.from({ length: records }, (_, i) => ({ id: i, title: sentence(), tags: ['a', 'b'], author: { name: `person ${i}` } })));

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const mib = (n: number) => n / 1024 / 1024;

const worker = new ExtractionWorker();
const encoder = new TextEncoder();
const cases: { name: string; filename: string; bytes: Uint8Array }[] = [
  { name: 'PDF, 100 pages', filename: 'paper.pdf', bytes: await pdfOf(100) },
  { name: 'DOCX, 200 sections', filename: 'report.docx', bytes: await docxOf(200) },
  { name: 'Markdown, 4 MiB', filename: 'big.md', bytes: encoder.encode(markdownOf(4 * 1024 * 1024)) },
  { name: 'HTML, 4 MiB', filename: 'big.html', bytes: encoder.encode(htmlOf(4 * 1024 * 1024)) },
  { name: 'CSV, 100k rows', filename: 'big.csv', bytes: encoder.encode(csvOf(100_000)) },
  { name: 'JSON, 50k records', filename: 'big.json', bytes: encoder.encode(jsonOf(50_000)) },
  { name: 'Text, 100 KiB (in process)', filename: 'small.txt', bytes: encoder.encode(Array.from({ length: 150 }, () => paragraph(6)).join('\n\n')) },
];

const results = [];
for (const c of cases) {
  let t = performance.now();
  await extractDocument({ bytes: c.bytes, filename: c.filename, worker });
  const coldMs = performance.now() - t;
  const extractMs: number[] = [];
  const chunkMs: number[] = [];
  let chunks = 0;
  let textChars = 0;
  for (let r = 0; r < rounds; r++) {
    t = performance.now();
    const document = await extractDocument({ bytes: c.bytes, filename: c.filename, worker });
    extractMs.push(performance.now() - t);
    textChars = document.blocks.reduce((sum, b) => sum + b.text.length, 0);
    t = performance.now();
    chunks = chunkBlocks(document.blocks).length;
    chunkMs.push(performance.now() - t);
  }
  results.push({
    case: c.name, file_mib: +mib(c.bytes.length).toFixed(2), text_mib: +mib(textChars).toFixed(2), chunks,
    cold_ms: Math.round(coldMs), extract_ms: Math.round(median(extractMs)), chunk_ms: Math.round(median(chunkMs)),
    chunk_mib_per_s: +(mib(textChars) / (median(chunkMs) / 1000)).toFixed(1),
  });
}

const zeros = deflatedZeros(1024);
const bomb = buildZip([...minimalDocxEntries(['Small.']), { name: 'word/pad.xml', data: zeros.data, method: 8, crc: zeros.crc, uncompressedSize: 0xffff_fff0 }]);
const rssBefore = process.memoryUsage().rss;
const t0 = performance.now();
const refusal = await extractDocument({ bytes: bomb, filename: 'bomb.docx', worker }).then(() => 'accepted', (e: { code?: string }) => e.code);
const bombMs = performance.now() - t0;
const bombResult = { bomb_file_kib: Math.round(bomb.length / 1024), claims_gib: 4, refusal, refuse_ms: +bombMs.toFixed(1), rss_growth_mib: +mib(process.memoryUsage().rss - rssBefore).toFixed(1) };
await worker.close();

if (values.json) console.log(JSON.stringify({ results, bomb: bombResult }, null, 2));
else {
  console.table(results);
  console.table([bombResult]);
}
