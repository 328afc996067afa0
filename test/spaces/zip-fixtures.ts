import { constants, crc32, deflateRawSync } from 'node:zlib';

/**
 * Hand-built zip archives for hostile-input tests. A zip library writes honest headers; a zip
 * bomb needs headers that claim what the test says, so the archive is laid out here byte by
 * byte (local headers, data, central directory, end record).
 */

export interface RawZipEntry {
  name: string;
  /** The entry's data as stored (deflated when `method` is 8). */
  data: Buffer;
  method: 0 | 8;
  crc: number;
  /** What the headers claim the entry unpacks to. */
  uncompressedSize: number;
}

export function buildZip(entries: RawZipEntry[]): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const entry of entries) {
    const name = Buffer.from(entry.name, 'utf8');
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(0x0800, 6);
    local.writeUInt16LE(entry.method, 8);
    local.writeUInt16LE(0, 10);
    local.writeUInt16LE(0x21, 12);
    local.writeUInt32LE(entry.crc >>> 0, 14);
    local.writeUInt32LE(entry.data.length, 18);
    local.writeUInt32LE(entry.uncompressedSize, 22);
    local.writeUInt16LE(name.length, 26);
    local.writeUInt16LE(0, 28);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(0x0800, 8);
    central.writeUInt16LE(entry.method, 10);
    central.writeUInt16LE(0, 12);
    central.writeUInt16LE(0x21, 14);
    central.writeUInt32LE(entry.crc >>> 0, 16);
    central.writeUInt32LE(entry.data.length, 20);
    central.writeUInt32LE(entry.uncompressedSize, 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt32LE(offset, 42);
    locals.push(local, name, entry.data);
    centrals.push(central, name);
    offset += local.length + name.length + entry.data.length;
  }
  const directory = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, directory, end]);
}

/** An honest deflated entry. */
export function deflatedEntry(name: string, content: string | Buffer): RawZipEntry {
  const data = Buffer.isBuffer(content) ? content : Buffer.from(content, 'utf8');
  return { name, data: deflateRawSync(data), method: 8, crc: crc32(data), uncompressedSize: data.length };
}

const MIB = 1024 * 1024;

/**
 * A raw deflate stream of `mib` MiB of zeros without ever holding them: one MiB of zeros
 * deflated and sync-flushed (a run of non-final blocks, about 1 KiB) repeated, then an empty
 * final block. Its CRC-32 is computed a MiB at a time.
 */
export function deflatedZeros(mib: number): { data: Buffer; crc: number; size: number } {
  const zeros = Buffer.alloc(MIB);
  const block = deflateRawSync(zeros, { finishFlush: constants.Z_SYNC_FLUSH });
  let crc = 0;
  for (let i = 0; i < mib; i++) crc = crc32(zeros, crc);
  return { data: Buffer.concat([...Array.from({ length: mib }, () => block), Buffer.from([0x03, 0x00])]), crc, size: mib * MIB };
}

/** The three parts a Word document needs, around `paragraphs` of body text. */
export function minimalDocxEntries(paragraphs: string[]): RawZipEntry[] {
  const body = paragraphs.map((p) => `<w:p><w:r><w:t>${p}</w:t></w:r></w:p>`).join('');
  return [
    deflatedEntry('[Content_Types].xml', '<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>'),
    deflatedEntry('_rels/.rels', '<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>'),
    deflatedEntry('word/document.xml', `<?xml version="1.0" encoding="UTF-8"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>${body}</w:body></w:document>`),
  ];
}
