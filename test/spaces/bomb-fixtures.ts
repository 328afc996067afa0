import { constants, crc32, deflateRawSync } from 'node:zlib';
import { buildZip, minimalDocxEntries, type RawZipEntry } from './zip-fixtures.ts';

/**
 * Small documents that ask a parser for far more memory or text than they are, one per format,
 * built here (never committed): each names what it expands to.
 */

const MIB = 1024 * 1024;

/**
 * A one-page PDF whose content stream (FlateDecode) inflates to `mib` MiB of spaces: blank
 * text, so pdf.js reads to its end and keeps all of it. One MiB deflated and sync-flushed
 * (about 1 KiB), repeated; the zlib wrapper's Adler-32 is computed in closed form.
 */
export function pdfStreamBomb(mib: number): Buffer {
  const block = deflateRawSync(Buffer.alloc(MIB, 0x20), { finishFlush: constants.Z_SYNC_FLUSH });
  const stream = Buffer.concat([Buffer.from([0x78, 0xda]), ...Array.from({ length: mib }, () => block), Buffer.from([0x03, 0x00]), adler32OfRun(0x20, mib * MIB)]);
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R >>',
  ].map((body, i) => Buffer.from(`${i + 1} 0 obj\n${body}\nendobj\n`));
  objects.push(Buffer.concat([Buffer.from(`4 0 obj\n<< /Length ${stream.length} /Filter /FlateDecode >>\nstream\n`), stream, Buffer.from('\nendstream\nendobj\n')]));
  const head = Buffer.from('%PDF-1.4\n');
  const offsets: number[] = [];
  let position = head.length;
  for (const object of objects) {
    offsets.push(position);
    position += object.length;
  }
  const xref = `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`).join('')}trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${position}\n%%EOF\n`;
  return Buffer.concat([head, ...objects, Buffer.from(xref)]);
}

/** Adler-32 of `length` bytes all `byte`: a = 1 + n·c, b = n + c·n(n+1)/2 (mod 65521). */
function adler32OfRun(byte: number, length: number): Buffer {
  const n = BigInt(length);
  const c = BigInt(byte);
  const a = (1n + n * c) % 65521n;
  const b = (n + (c * n * (n + 1n)) / 2n) % 65521n;
  const out = Buffer.alloc(4);
  out.writeUInt32BE(Number((b << 16n) | a));
  return out;
}

/**
 * A Word document whose body is `mib` MiB of one-letter paragraphs: within the zip guard's
 * claims (under its total, each entry under its ratio: a digit in every paragraph keeps the
 * deflate ratio near 60×), but millions of XML elements for mammoth to hold. A stored media
 * entry (never inflated) makes the upload big enough for the guard's 50× rule.
 */
export function docxElementBomb(mib: number): Buffer {
  const paragraphs: string[] = [];
  let size = 0;
  let seed = 1;
  while (size < mib * MIB) {
    seed = (seed * 1103515245 + 12345) >>> 0;
    const p = String(seed % 10);
    paragraphs.push(p);
    size += 34;
  }
  const padding = Buffer.alloc(Math.ceil((mib * MIB) / 50) + 64 * 1024);
  for (let i = 0; i < padding.length; i++) padding[i] = (i * 2654435761) >>> 24;
  const media: RawZipEntry = { name: 'word/media/pad.bin', data: padding, method: 0, crc: crc32(padding), uncompressedSize: padding.length };
  return buildZip([...minimalDocxEntries(paragraphs), media]);
}

/** HTML whose lists nest `depth` deep around `items` items: each item's line is indented 2·depth spaces. */
export function htmlIndentBomb(depth: number, items: number): string {
  return `<html><body>${'<ul>'.repeat(depth)}${'<li>x</li>'.repeat(items)}${'</ul>'.repeat(depth)}</body></html>`;
}

/** A GFM table of `columns` columns and `rows` one-cell rows: marked pads every row to every column. */
export function markdownTableBomb(columns: number, rows: number): string {
  return `|${'a|'.repeat(columns)}\n|${'-|'.repeat(columns)}\n${'|x\n'.repeat(rows)}`;
}

/** JSON nested `depth` keys of `keyChars` characters around `items` numbers: every number's line repeats the whole path. */
export function jsonPathBomb(depth: number, keyChars: number, items: number): string {
  const key = JSON.stringify('k'.repeat(keyChars));
  return `${`{${key}:`.repeat(depth)}[${Array.from({ length: items }, () => '0').join(',')}]${'}'.repeat(depth)}`;
}

/** A CSV of `rows` rows of `columns` one-letter fields: each `,` becomes ` | `. */
export function csvSeparatorBomb(columns: number, rows: number): string {
  const row = Array.from({ length: columns }, () => 'a').join(',');
  return `${Array.from({ length: rows }, () => row).join('\n')}\n`;
}
