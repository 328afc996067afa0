/**
 * GGUF files with chosen metadata for discovery tests and the discovery benchmark: real GGUF v3
 * headers (any architecture, file type, pooling, chat template, split keys, a vocabulary of any
 * size) followed by small F32 tensors whose data is really there, so a reader that checks the
 * tensor section finds a complete file. They are not runnable models (use tiny-gguf.ts for that).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

export type GgufValue =
  | { t: 'u8' | 'u16' | 'u32' | 'i32' | 'u64' | 'f32'; v: number }
  | { t: 'bool'; v: boolean }
  | { t: 'str'; v: string }
  | { t: 'str[]'; count: number; item: (i: number) => string }
  | { t: 'i32[]'; count: number }
  | { t: 'f32[]'; count: number };

export interface GgufFixtureOptions {
  architecture?: string | null;
  name?: string;
  /** general.type (`model`, `adapter`, `mmproj`). */
  type?: string;
  fileType?: number;
  sizeLabel?: string;
  contextLength?: number;
  embeddingLength?: number;
  poolingType?: number;
  causal?: boolean;
  chatTemplate?: string;
  split?: { no: number; count: number };
  /** Entries of tokenizer.ggml.tokens (and token_type); 0: no vocabulary. */
  vocabSize?: number;
  /** Entries of tokenizer.ggml.merges (byte-pair merges, as Llama 3 and Qwen files carry). */
  merges?: number;
  /** Tensors (F32, data present). Default: one of 4×8. */
  tensors?: { name: string; dims: number[] }[];
  /** More key/value pairs, written after the others. */
  extra?: [string, GgufValue][];
  alignment?: number;
}

const TYPE = { u8: 0, u16: 2, u32: 4, i32: 5, f32: 6, bool: 7, str: 8, arr: 9, u64: 10 } as const;

class Writer {
  #buf = Buffer.allocUnsafe(1 << 16);
  length = 0;
  #room(n: number): void {
    if (this.length + n <= this.#buf.length) return;
    const bigger = Buffer.allocUnsafe(Math.max(this.#buf.length * 2, this.length + n));
    this.#buf.copy(bigger, 0, 0, this.length);
    this.#buf = bigger;
  }
  u8(v: number): void { this.#room(1); this.#buf.writeUInt8(v, this.length); this.length += 1; }
  u16(v: number): void { this.#room(2); this.#buf.writeUInt16LE(v, this.length); this.length += 2; }
  u32(v: number): void { this.#room(4); this.#buf.writeUInt32LE(v, this.length); this.length += 4; }
  i32(v: number): void { this.#room(4); this.#buf.writeInt32LE(v, this.length); this.length += 4; }
  f32(v: number): void { this.#room(4); this.#buf.writeFloatLE(v, this.length); this.length += 4; }
  u64(v: number): void { this.#room(8); this.#buf.writeBigUInt64LE(BigInt(v), this.length); this.length += 8; }
  str(s: string): void {
    const n = Buffer.byteLength(s);
    this.u64(n);
    this.#room(n);
    this.#buf.write(s, this.length);
    this.length += n;
  }
  zeros(n: number): void { this.#room(n); this.#buf.fill(0, this.length, this.length + n); this.length += n; }
  pad(alignment: number): void { const rem = this.length % alignment; if (rem !== 0) this.zeros(alignment - rem); }
  bytes(): Buffer { return this.#buf.subarray(0, this.length); }
}

function writeValue(w: Writer, value: GgufValue): void {
  switch (value.t) {
    case 'u8': w.u32(TYPE.u8); w.u8(value.v); break;
    case 'u16': w.u32(TYPE.u16); w.u16(value.v); break;
    case 'u32': w.u32(TYPE.u32); w.u32(value.v); break;
    case 'i32': w.u32(TYPE.i32); w.i32(value.v); break;
    case 'u64': w.u32(TYPE.u64); w.u64(value.v); break;
    case 'f32': w.u32(TYPE.f32); w.f32(value.v); break;
    case 'bool': w.u32(TYPE.bool); w.u8(value.v ? 1 : 0); break;
    case 'str': w.u32(TYPE.str); w.str(value.v); break;
    case 'str[]': w.u32(TYPE.arr); w.u32(TYPE.str); w.u64(value.count); for (let i = 0; i < value.count; i++) w.str(value.item(i)); break;
    case 'i32[]': w.u32(TYPE.arr); w.u32(TYPE.i32); w.u64(value.count); w.zeros(4 * value.count); break;
    case 'f32[]': w.u32(TYPE.arr); w.u32(TYPE.f32); w.u64(value.count); w.zeros(4 * value.count); break;
  }
}

/** Token strings of realistic length (BPE vocabularies average ~6-7 bytes a token). */
const vocabToken = (i: number): string => `Ġtok${i.toString(36)}`;
const mergePair = (i: number): string => `Ġt ok${i.toString(36)}`;

export function buildGgufFixture(options: GgufFixtureOptions = {}): Buffer {
  const arch = options.architecture === undefined ? 'llama' : options.architecture;
  const alignment = options.alignment ?? 32;
  const meta: [string, GgufValue][] = [];
  if (arch !== null) meta.push(['general.architecture', { t: 'str', v: arch }]);
  if (options.type !== undefined) meta.push(['general.type', { t: 'str', v: options.type }]);
  if (options.name !== undefined) meta.push(['general.name', { t: 'str', v: options.name }]);
  if (options.sizeLabel !== undefined) meta.push(['general.size_label', { t: 'str', v: options.sizeLabel }]);
  if (options.fileType !== undefined) meta.push(['general.file_type', { t: 'u32', v: options.fileType }]);
  if (options.alignment !== undefined) meta.push(['general.alignment', { t: 'u32', v: alignment }]);
  const a = arch ?? 'none';
  if (options.contextLength !== undefined) meta.push([`${a}.context_length`, { t: 'u32', v: options.contextLength }]);
  if (options.embeddingLength !== undefined) meta.push([`${a}.embedding_length`, { t: 'u32', v: options.embeddingLength }]);
  if (options.poolingType !== undefined) meta.push([`${a}.pooling_type`, { t: 'u32', v: options.poolingType }]);
  if (options.causal !== undefined) meta.push([`${a}.attention.causal`, { t: 'bool', v: options.causal }]);
  if ((options.vocabSize ?? 0) > 0) {
    meta.push(['tokenizer.ggml.model', { t: 'str', v: 'gpt2' }]);
    meta.push(['tokenizer.ggml.tokens', { t: 'str[]', count: options.vocabSize!, item: vocabToken }]);
    meta.push(['tokenizer.ggml.token_type', { t: 'i32[]', count: options.vocabSize! }]);
  }
  if ((options.merges ?? 0) > 0) meta.push(['tokenizer.ggml.merges', { t: 'str[]', count: options.merges!, item: mergePair }]);
  if (options.chatTemplate !== undefined) meta.push(['tokenizer.chat_template', { t: 'str', v: options.chatTemplate }]);
  if (options.split !== undefined) {
    meta.push(['split.no', { t: 'u16', v: options.split.no }]);
    meta.push(['split.count', { t: 'u16', v: options.split.count }]);
  }
  meta.push(...(options.extra ?? []));

  const tensors = options.tensors ?? [{ name: 'token_embd.weight', dims: [4, 8] }];
  const w = new Writer();
  w.u32(0x46554747);
  w.u32(3);
  w.u64(tensors.length);
  w.u64(meta.length);
  for (const [key, value] of meta) {
    w.str(key);
    writeValue(w, value);
  }
  let offset = 0;
  const sizes = tensors.map((t) => 4 * t.dims.reduce((x, y) => x * y, 1));
  tensors.forEach((t, i) => {
    w.str(t.name);
    w.u32(t.dims.length);
    for (const d of t.dims) w.u64(d);
    w.u32(0);
    w.u64(offset);
    offset += Math.ceil(sizes[i]! / alignment) * alignment;
  });
  w.pad(alignment);
  for (const size of sizes) {
    w.zeros(size);
    w.pad(alignment);
  }
  return Buffer.from(w.bytes());
}

export function writeGgufFixture(path: string, options: GgufFixtureOptions = {}): string {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, buildGgufFixture(options));
  return path;
}
