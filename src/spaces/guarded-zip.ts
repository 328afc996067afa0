import type { Readable } from 'node:stream';
import yauzl from 'yauzl';
import yazl from 'yazl';
import { documentExpandsTooFar, documentUnreadable } from './extraction-errors.ts';

/**
 * Zip archives (DOCX) read with a bound on what they may unpack to. A zip bomb is a small file
 * whose entries inflate to gigabytes; the guard refuses it from the central directory's claims
 * alone, before inflating a byte, and inflates only within those claims (yauzl stops a stream
 * the moment it passes its entry's declared size, so a lying header is caught early too).
 *
 * The parser that reads DOCX (mammoth, through JSZip) then gets a new zip built here from the
 * verified entries, stored uncompressed: what it reads is exactly what was measured, whatever
 * tricks the original's structure played on one parser and not the other.
 */

export interface ZipEntryInfo {
  name: string;
  compressedSize: number;
  uncompressedSize: number;
}

export interface ZipLimits {
  /** Most bytes all entries together may unpack to. */
  maxTotalBytes: number;
  /** Most entries. */
  maxEntries: number;
}

const MIB = 1024 * 1024;
/** Past this many bytes an entry must not claim a ratio above MAX_RATIO. */
const RATIO_FLOOR_BYTES = MIB;
/**
 * Real documents' XML compresses 5-30×; deflate cannot exceed about 1,030×. A megabyte-sized
 * entry past 200× is zeros or the same row repeated: a bomb, or not a document worth reading.
 */
const MAX_RATIO = 200;

/** 64 MiB, or 50 times the upload (never less than 4 MiB, so small real files are never refused), whichever is smaller. */
export function zipLimitsFor(uploadBytes: number): ZipLimits {
  return { maxTotalBytes: Math.min(64 * MIB, Math.max(4 * MIB, 50 * uploadBytes)), maxEntries: 10_000 };
}

/**
 * The entries the central directory lists, nothing inflated. A file that is no zip is
 * `document_unreadable`; one that says it holds more than `maxEntries` is refused before they are listed.
 */
export async function listZipEntries(bytes: Uint8Array, maxEntries = Number.POSITIVE_INFINITY): Promise<ZipEntryInfo[]> {
  const zip = await openZip(bytes);
  try {
    if (zip.entryCount > maxEntries) throw documentExpandsTooFar(`The archive holds ${zip.entryCount} files; at most ${maxEntries} are read.`);
    const entries: ZipEntryInfo[] = [];
    for await (const entry of readEntries(zip)) entries.push({ name: entry.fileName, compressedSize: entry.compressedSize, uncompressedSize: entry.uncompressedSize });
    return entries;
  } finally {
    zip.close();
  }
}

/** Refuses (413 `document_expands_too_far`) an archive whose entries claim more than the limits. */
export function checkZipClaims(entries: readonly ZipEntryInfo[], limits: ZipLimits): void {
  if (entries.length > limits.maxEntries) throw documentExpandsTooFar(`The archive holds ${entries.length} files; at most ${limits.maxEntries} are read.`);
  let total = 0;
  for (const entry of entries) {
    total += entry.uncompressedSize;
    if (total > limits.maxTotalBytes) {
      throw documentExpandsTooFar(`The archive unpacks to more than ${formatBytes(limits.maxTotalBytes)}; at most that much is read from an upload of this size.`);
    }
    const ratio = entry.uncompressedSize / Math.max(1, entry.compressedSize);
    if (entry.uncompressedSize > RATIO_FLOOR_BYTES && ratio > MAX_RATIO) {
      throw documentExpandsTooFar(`An entry of the archive claims to unpack ${Math.round(ratio)} times its size; that is a zip bomb, not a document.`);
    }
  }
}

/**
 * The archive's entries, inflated within `limits`, as a new zip of stored (uncompressed)
 * entries. Entries `skip` names are left out without being inflated (DOCX media: text
 * extraction never reads an image).
 */
export async function rebuildZipWithinLimits(bytes: Uint8Array, limits: ZipLimits, skip: (name: string) => boolean = () => false): Promise<{ zip: Buffer; names: Set<string>; read: (name: string) => Buffer | undefined }> {
  const zip = await openZip(bytes);
  const kept = new Map<string, Buffer>();
  try {
    if (zip.entryCount > limits.maxEntries) throw documentExpandsTooFar(`The archive holds ${zip.entryCount} files; at most ${limits.maxEntries} are read.`);
    const claims: ZipEntryInfo[] = [];
    const entries: yauzl.Entry[] = [];
    for await (const entry of readEntries(zip)) {
      claims.push({ name: entry.fileName, compressedSize: entry.compressedSize, uncompressedSize: entry.uncompressedSize });
      entries.push(entry);
    }
    checkZipClaims(claims, limits);
    for (const entry of entries) {
      if (entry.fileName.endsWith('/') || skip(entry.fileName)) continue;
      // Two entries of one name are read differently by different parsers; no real document has them.
      if (kept.has(entry.fileName)) throw documentUnreadable(`The archive holds ${JSON.stringify(entry.fileName.slice(0, 100))} twice.`);
      if (entry.isEncrypted()) throw documentUnreadable('The document is encrypted; svc reads only unprotected files.');
      kept.set(entry.fileName, await inflateEntry(zip, entry));
    }
  } finally {
    zip.close();
  }
  const out = new yazl.ZipFile();
  try {
    for (const [name, data] of kept) out.addBuffer(data, name, { compress: false });
  } catch (error) {
    // yazl refuses names no archive should hold (absolute, `..`): so does this reader.
    throw documentUnreadable(`The archive cannot be read: ${error instanceof Error ? error.message : String(error)}`, error);
  }
  out.end();
  const parts: Buffer[] = [];
  for await (const part of out.outputStream as Readable) parts.push(part as Buffer);
  return { zip: Buffer.concat(parts), names: new Set(kept.keys()), read: (name) => kept.get(name) };
}

function openZip(bytes: Uint8Array): Promise<yauzl.ZipFile> {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return new Promise((resolve, reject) => {
    yauzl.fromBuffer(buffer, { lazyEntries: true, validateEntrySizes: true, strictFileNames: false }, (error, zip) => {
      if (error !== null) reject(documentUnreadable(`The archive cannot be read: ${error.message}`, error));
      else resolve(zip);
    });
  });
}

async function* readEntries(zip: yauzl.ZipFile): AsyncGenerator<yauzl.Entry> {
  for (;;) {
    const entry = await new Promise<yauzl.Entry | null>((resolve, reject) => {
      const onEntry = (e: yauzl.Entry) => done(() => resolve(e));
      const onEnd = () => done(() => resolve(null));
      const onError = (error: Error) => done(() => reject(documentUnreadable(`The archive cannot be read: ${error.message}`, error)));
      const done = (settle: () => void) => {
        zip.off('entry', onEntry).off('end', onEnd).off('error', onError);
        settle();
      };
      zip.on('entry', onEntry).on('end', onEnd).on('error', onError);
      zip.readEntry();
    });
    if (entry === null) return;
    yield entry;
  }
}

async function inflateEntry(zip: yauzl.ZipFile, entry: yauzl.Entry): Promise<Buffer> {
  const stream = await new Promise<Readable>((resolve, reject) => {
    zip.openReadStream(entry, (error, s) => {
      if (error !== null) reject(documentUnreadable(`The archive's entry ${JSON.stringify(entry.fileName.slice(0, 100))} cannot be read: ${error.message}`, error));
      else resolve(s);
    });
  });
  const parts: Buffer[] = [];
  try {
    for await (const part of stream) parts.push(part as Buffer);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    // yauzl's validateEntrySizes: the entry inflates past what its header declared.
    if (/too many bytes/i.test(message)) throw documentExpandsTooFar(`An entry of the archive unpacks to more than its header declares; that is a zip bomb, not a document.`);
    throw documentUnreadable(`The archive's entry ${JSON.stringify(entry.fileName.slice(0, 100))} cannot be read: ${message}`, error);
  }
  return Buffer.concat(parts);
}

function formatBytes(bytes: number): string {
  return bytes >= MIB ? `${Math.round(bytes / MIB)} MiB` : `${Math.round(bytes / 1024)} KiB`;
}
