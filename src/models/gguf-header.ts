/**
 * Reads what svc needs to know about a GGUF model from its header alone: the key/value metadata
 * section and the tensor infos, never the weights. Format: the GGUF spec (ggml's docs/gguf.md) —
 * magic `GGUF`, version, tensor count, key/value count (u64 since v2), then typed key/value
 * pairs, then one info per tensor (name, dims, ggml type, data offset), then aligned data.
 *
 * The costly part of a header is the tokenizer: a 128k-entry vocabulary and a 280k-entry merge
 * list are ~8 MB of short length-prefixed strings. They are skipped by walking their length
 * fields through a reused buffer, without decoding a string or allocating per entry; strings
 * longer than the buffer are skipped by moving the file position, unread.
 */
import { open, type FileHandle } from 'node:fs/promises';

/** What the header says, reduced to plain JSON values (it is kept in the index cache as is). */
export interface GgufSummary {
  /** GGUF format version (2 or 3; v1 is refused, as llama.cpp does). */
  version: number;
  /** `general.architecture`, e.g. `llama`, `qwen2`, `bert`. */
  architecture: string | null;
  /** `general.name`. */
  name: string | null;
  /** `general.type`: `model`, `adapter` (LoRA), `mmproj` (vision projector), … */
  type: string | null;
  /** `general.file_type`, llama.cpp's LLAMA_FTYPE number. */
  fileType: number | null;
  /** The file type's name as llama.cpp prints it (`Q4_K_M`), or null when absent/unknown. */
  quantization: string | null;
  /** `general.size_label`, e.g. `8B`, `8x7B`. */
  sizeLabel: string | null;
  /** Elements of all tensors in this file (for a split model: this part only). */
  parameterCount: number;
  tensorCount: number;
  /** `<arch>.context_length`: the training context. */
  contextLength: number | null;
  /** `<arch>.embedding_length`: the hidden size, which is also the embedding dimension. */
  embeddingLength: number | null;
  /** `<arch>.pooling_type` (llama.cpp's LLAMA_POOLING_TYPE: 0 none, 1 mean, 2 cls, 3 last, 4 rank). */
  poolingType: number | null;
  /** `<arch>.attention.causal`; `false` marks an encoder. */
  causalAttention: boolean | null;
  /** Whether `tokenizer.chat_template` is present. */
  hasChatTemplate: boolean;
  /** `split.no` / `split.count` for models split over several files (gguf-split). */
  split: { no: number; count: number } | null;
}

/** The file is not a GGUF llama.cpp can load: wrong magic, truncated, or malformed. */
export class GgufFormatError extends Error {
  override name = 'GgufFormatError';
}

/** llama.cpp's LLAMA_FTYPE names (include/llama.h); retired numbers keep their old names. */
const FILE_TYPE_NAMES: readonly (string | undefined)[] = [
  'F32', 'F16', 'Q4_0', 'Q4_1', 'Q4_1_SOME_F16', 'Q4_2', 'Q4_3', 'Q8_0', 'Q5_0', 'Q5_1',
  'Q2_K', 'Q3_K_S', 'Q3_K_M', 'Q3_K_L', 'Q4_K_S', 'Q4_K_M', 'Q5_K_S', 'Q5_K_M', 'Q6_K', 'IQ2_XXS',
  'IQ2_XS', 'Q2_K_S', 'IQ3_XS', 'IQ3_XXS', 'IQ1_S', 'IQ4_NL', 'IQ3_S', 'IQ3_M', 'IQ2_S', 'IQ2_M',
  'IQ4_XS', 'IQ1_M', 'BF16', 'Q4_0_4_4', 'Q4_0_4_8', 'Q4_0_8_8', 'TQ1_0', 'TQ2_0', 'MXFP4_MOE', 'NVFP4',
  'Q1_0', 'Q2_0',
];

/** `Q4_K_M` for LLAMA_FTYPE_MOSTLY_Q4_K_M (15), null for numbers this table does not know. */
export function quantizationName(fileType: number | null): string | null {
  if (fileType === null || !Number.isInteger(fileType) || fileType < 0) return null;
  return FILE_TYPE_NAMES[fileType] ?? null;
}

/**
 * ggml's [elements per block, bytes per block] by type number (ggml.h's ggml_type; block
 * sizes from ggml-common.h's block structs), to check that a file holds all its tensor data.
 */
const TENSOR_BLOCKS = new Map<number, readonly [number, number]>([
  [0, [1, 4]], [1, [1, 2]], [2, [32, 18]], [3, [32, 20]], [6, [32, 22]], [7, [32, 24]], [8, [32, 34]],
  [9, [32, 36]], [10, [256, 84]], [11, [256, 110]], [12, [256, 144]], [13, [256, 176]], [14, [256, 210]],
  [15, [256, 292]], [16, [256, 66]], [17, [256, 74]], [18, [256, 98]], [19, [256, 50]], [20, [32, 18]],
  [21, [256, 110]], [22, [256, 82]], [23, [256, 136]], [24, [1, 1]], [25, [1, 2]], [26, [1, 4]],
  [27, [1, 8]], [28, [1, 8]], [29, [256, 56]], [30, [1, 2]], [34, [256, 54]], [35, [256, 66]],
  [39, [32, 17]], [40, [64, 36]], [41, [128, 18]], [42, [64, 18]],
]);

// GGUF value types.
const T_UINT8 = 0, T_INT8 = 1, T_UINT16 = 2, T_INT16 = 3, T_UINT32 = 4, T_INT32 = 5, T_FLOAT32 = 6;
const T_BOOL = 7, T_STRING = 8, T_ARRAY = 9, T_UINT64 = 10, T_INT64 = 11, T_FLOAT64 = 12;
const FIXED_SIZE: readonly number[] = [1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8];

/** Bounds that keep a hostile header from costing more than a real one. */
const MAX_KEY_BYTES = 65_536;
const MAX_KEPT_STRING_BYTES = 1 << 20;
const MAX_TENSOR_DIMS = 8;
const MAX_ARRAY_DEPTH = 4;
const CHUNK = 1 << 20;

/** The keys kept; everything else is skipped without decoding. */
const WANTED = new Set([
  'general.architecture', 'general.name', 'general.type', 'general.file_type', 'general.size_label',
  'general.alignment', 'tokenizer.chat_template', 'split.no', 'split.count',
]);
const WANTED_SUFFIXES = ['.context_length', '.embedding_length', '.pooling_type', '.attention.causal'];

type Scalar = number | boolean | string;

/**
 * A forward-only reader over a file through one reused buffer. `pos` is the absolute file
 * position; the buffer holds bytes [start, start + filled) of the file.
 */
class HeaderReader {
  readonly #file: FileHandle;
  readonly size: number;
  #buf: Buffer;
  #view: DataView;
  #start = 0;
  #filled = 0;
  pos = 0;

  constructor(file: FileHandle, size: number, buffer: Buffer) {
    this.#file = file;
    this.size = size;
    this.#buf = buffer;
    this.#view = new DataView(buffer.buffer, buffer.byteOffset, buffer.byteLength);
  }

  /** Makes bytes [pos, pos + n) available in the buffer; throws if the file ends first. */
  async #need(n: number): Promise<number> {
    let offset = this.pos - this.#start;
    if (offset >= 0 && offset + n <= this.#filled) return offset;
    if (this.pos + n > this.size) throw truncated(this.pos, n, this.size);
    if (n > this.#buf.length) {
      this.#buf = Buffer.allocUnsafe(Math.max(n, this.#buf.length * 2));
      this.#view = new DataView(this.#buf.buffer, this.#buf.byteOffset, this.#buf.byteLength);
    }
    const want = Math.min(this.#buf.length, this.size - this.pos);
    let got = 0;
    while (got < n) {
      const { bytesRead } = await this.#file.read(this.#buf, got, want - got, this.pos + got);
      if (bytesRead === 0) throw truncated(this.pos, n, this.pos + got);
      got += bytesRead;
    }
    this.#start = this.pos;
    this.#filled = got;
    offset = 0;
    return offset;
  }

  async u32(): Promise<number> {
    const at = await this.#need(4);
    this.pos += 4;
    return this.#buf.readUInt32LE(at);
  }

  /** A u64 as a number; values past 2^53 are malformed for every use GGUF makes of them. */
  async u64(): Promise<number> {
    const at = await this.#need(8);
    this.pos += 8;
    const high = this.#buf.readUInt32LE(at + 4);
    if (high >= 0x200000) throw new GgufFormatError(`a 64-bit count or length at byte ${this.pos - 8} is out of range`);
    return high * 0x1_0000_0000 + this.#buf.readUInt32LE(at);
  }

  /** A count read as u64 (v2+) and checked against what the rest of the file could hold. */
  async count(minBytesEach: number, what: string): Promise<number> {
    const n = await this.u64();
    if (n * minBytesEach > this.size - this.pos) throw new GgufFormatError(`truncated or corrupt: ${what} (${n}) cannot fit in the file`);
    return n;
  }

  async string(maxBytes: number, what: string): Promise<string> {
    const length = await this.u64();
    if (length > maxBytes) throw new GgufFormatError(`${what} is ${length} bytes long`);
    const at = await this.#need(length);
    this.pos += length;
    return this.#buf.toString('utf8', at, at + length);
  }

  async skipString(): Promise<void> {
    const length = await this.u64();
    this.skip(length);
  }

  skip(n: number): void {
    if (this.pos + n > this.size) throw truncated(this.pos, n, this.size);
    this.pos += n;
  }

  /**
   * Skips `count` length-prefixed strings: the vocabulary and merges. The hot loop reads the
   * 8-byte lengths straight from the buffer; a refill happens only at the buffer's end.
   */
  async skipStrings(count: number): Promise<void> {
    let left = count;
    while (left > 0) {
      const first = await this.#need(8);
      const base = this.#start;
      const [at, rest] = skipLengthPrefixed(this.#view, first, this.#filled, left);
      if (rest < 0) throw new GgufFormatError(`a string length at byte ${base + at} is out of range`);
      left = rest;
      this.pos = base + at;
      if (this.pos > this.size) throw truncated(this.pos, 0, this.size);
    }
  }

  async scalar(type: number): Promise<Scalar> {
    switch (type) {
      case T_STRING: return this.string(MAX_KEPT_STRING_BYTES, 'a string value');
      case T_UINT64: case T_INT64: return this.u64();
      case T_FLOAT64: { const at = await this.#need(8); this.pos += 8; return this.#buf.readDoubleLE(at); }
      default: break;
    }
    const size = FIXED_SIZE[type];
    if (size === undefined) throw new GgufFormatError(`unknown value type ${type} at byte ${this.pos - 4}`);
    const at = await this.#need(size);
    this.pos += size;
    const b = this.#buf;
    switch (type) {
      case T_UINT8: return b.readUInt8(at);
      case T_INT8: return b.readInt8(at);
      case T_UINT16: return b.readUInt16LE(at);
      case T_INT16: return b.readInt16LE(at);
      case T_UINT32: return b.readUInt32LE(at);
      case T_INT32: return b.readInt32LE(at);
      case T_FLOAT32: return b.readFloatLE(at);
      case T_BOOL: return b.readUInt8(at) !== 0;
      default: throw new GgufFormatError(`value type ${type} cannot be read as a scalar`);
    }
  }

  async skipValue(type: number, depth = 0): Promise<void> {
    if (type === T_STRING) return this.skipString();
    if (type === T_ARRAY) {
      if (depth >= MAX_ARRAY_DEPTH) throw new GgufFormatError('arrays nested too deeply');
      const elementType = await this.u32();
      if (elementType === T_STRING) return this.skipStrings(await this.count(8, 'a string array\'s length'));
      if (elementType === T_ARRAY) {
        const n = await this.count(12, 'an array\'s length');
        for (let i = 0; i < n; i++) await this.skipValue(T_ARRAY, depth + 1);
        return;
      }
      const size = FIXED_SIZE[elementType];
      if (size === undefined || size === 0) throw new GgufFormatError(`unknown array element type ${elementType}`);
      const n = await this.count(size, 'an array\'s length');
      this.skip(n * size);
      return;
    }
    const size = FIXED_SIZE[type];
    if (size === undefined || size === 0) throw new GgufFormatError(`unknown value type ${type} at byte ${this.pos - 4}`);
    this.skip(size);
  }
}

/**
 * The hot loop: walks up to `count` u64-length-prefixed strings in view[at, end) and returns
 * where it stopped and how many are left (-1: a length over 4 GiB, which no token has). A plain
 * function over a DataView keeps V8's optimized code monomorphic (~3× faster than in a method).
 */
function skipLengthPrefixed(view: DataView, start: number, end: number, count: number): [number, number] {
  let at = start;
  let left = count;
  while (left > 0 && at + 8 <= end) {
    if (view.getUint32(at + 4, true) !== 0) return [at, -1];
    at += 8 + view.getUint32(at, true);
    left--;
  }
  return [at, left];
}

function truncated(at: number, n: number, size: number): GgufFormatError {
  return new GgufFormatError(`truncated: the header needs byte ${at + n} but the file ends at ${size}`);
}

function asNumber(value: Scalar | undefined): number | null {
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}

function asString(value: Scalar | undefined): string | null {
  return typeof value === 'string' ? value : null;
}

/** A reusable read buffer per concurrent reader; callers that read many files pass one. */
export function headerBuffer(): Buffer {
  return Buffer.allocUnsafe(CHUNK);
}

/**
 * Reads a GGUF header. Throws GgufFormatError for anything llama.cpp would refuse to load
 * (wrong magic, unsupported version, malformed or truncated header, tensor data past the end
 * of the file) and the file system's error when the file cannot be opened or read.
 */
export async function readGgufSummary(path: string, buffer: Buffer = headerBuffer()): Promise<GgufSummary> {
  const file = await open(path, 'r');
  try {
    const { size } = await file.stat();
    const reader = new HeaderReader(file, size, buffer);
    if (size < 4) throw new GgufFormatError(`not a GGUF file (${size} bytes)`);
    const magic = await reader.u32();
    if (magic !== 0x46554747) throw new GgufFormatError('not a GGUF file (no GGUF magic at its start)');
    const version = await reader.u32();
    if (version === 1) throw new GgufFormatError('GGUF v1 files are no longer supported by llama.cpp; convert it again');
    if (version !== 2 && version !== 3) {
      throw new GgufFormatError(version > 0xffff ? 'a big-endian GGUF file; llama.cpp reads little-endian files only' : `unsupported GGUF version ${version}`);
    }
    // Each tensor info takes at least 8 (name length) + 4 (dims) + 4 (type) + 8 (offset) bytes; each pair 8 + 4.
    const tensorCount = await reader.count(24, 'the tensor count');
    const kvCount = await reader.count(12, 'the key/value count');
    const values = new Map<string, Scalar>();
    for (let i = 0; i < kvCount; i++) {
      const key = await reader.string(MAX_KEY_BYTES, 'a metadata key');
      const type = await reader.u32();
      if (type !== T_ARRAY && (WANTED.has(key) || WANTED_SUFFIXES.some((s) => key.endsWith(s)))) {
        // A chat template can be long; only its presence matters.
        if (key === 'tokenizer.chat_template' && type === T_STRING) {
          await reader.skipString();
          values.set(key, true);
        } else {
          values.set(key, await reader.scalar(type));
        }
      } else {
        await reader.skipValue(type);
      }
    }

    let parameterCount = 0;
    let dataNeeded = 0;
    for (let i = 0; i < tensorCount; i++) {
      await reader.skipString();
      const dims = await reader.u32();
      if (dims > MAX_TENSOR_DIMS) throw new GgufFormatError(`tensor ${i} has ${dims} dimensions`);
      let elements = 1;
      let rowElements = 0;
      for (let d = 0; d < dims; d++) {
        const extent = await reader.u64();
        if (d === 0) rowElements = extent;
        elements *= extent;
      }
      const type = await reader.u32();
      const offset = await reader.u64();
      parameterCount += elements;
      const block = TENSOR_BLOCKS.get(type);
      // Types added after this table are left to llama.cpp to check.
      if (block !== undefined && rowElements % block[0] === 0) {
        dataNeeded = Math.max(dataNeeded, offset + (elements / block[0]) * block[1]);
      }
    }
    const alignment = asNumber(values.get('general.alignment')) ?? 32;
    if (alignment > 0 && Number.isInteger(alignment)) {
      const dataStart = Math.ceil(reader.pos / alignment) * alignment;
      if (tensorCount > 0 && dataStart + dataNeeded > size) {
        throw new GgufFormatError(`truncated: the tensor data needs ${dataStart + dataNeeded} bytes but the file has ${size}`);
      }
    }

    const architecture = asString(values.get('general.architecture'));
    const archValue = (suffix: string): Scalar | undefined => (architecture === null ? undefined : values.get(`${architecture}${suffix}`));
    const fileType = asNumber(values.get('general.file_type'));
    const splitCount = asNumber(values.get('split.count'));
    const causal = archValue('.attention.causal');
    return {
      version,
      architecture,
      name: asString(values.get('general.name')),
      type: asString(values.get('general.type')),
      fileType,
      quantization: quantizationName(fileType),
      sizeLabel: asString(values.get('general.size_label')),
      parameterCount,
      tensorCount,
      contextLength: asNumber(archValue('.context_length')),
      embeddingLength: asNumber(archValue('.embedding_length')),
      poolingType: asNumber(archValue('.pooling_type')),
      causalAttention: typeof causal === 'boolean' ? causal : null,
      hasChatTemplate: values.get('tokenizer.chat_template') === true,
      split: splitCount !== null && splitCount > 1 ? { no: asNumber(values.get('split.no')) ?? 0, count: splitCount } : null,
    };
  } finally {
    await file.close();
  }
}
