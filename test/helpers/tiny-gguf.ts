/**
 * Writes a tiny random-weight GGUF v3 model (llama architecture, SentencePiece-style
 * vocabulary, a ChatML chat template) so the tests and benchmarks run real llama.cpp
 * inference with no download. Weights come from a seeded PRNG, so every run of the suite
 * sees the same model and greedy decoding is reproducible.
 *
 * Format reference: the GGUF spec (header, key/value metadata, tensor infos, aligned data).
 */
import { mkdirSync, writeFileSync, existsSync } from 'node:fs';
import { dirname } from 'node:path';

const GGUF_MAGIC = 0x46554747; // "GGUF" little-endian
const ALIGNMENT = 32;

const enum_ = {
  UINT32: 4,
  INT32: 5,
  FLOAT32: 6,
  BOOL: 7,
  STRING: 8,
  ARRAY: 9,
} as const;

const GGML_TYPE_F32 = 0;
const EOS_TOKEN_ID = 2;

type MetaValue =
  | { t: 'u32'; v: number }
  | { t: 'f32'; v: number }
  | { t: 'bool'; v: boolean }
  | { t: 'str'; v: string }
  | { t: 'str[]'; v: readonly string[] }
  | { t: 'f32[]'; v: readonly number[] }
  | { t: 'i32[]'; v: readonly number[] };

export interface TinyGgufOptions {
  embedding?: number;
  blocks?: number;
  heads?: number;
  feedForward?: number;
  contextLength?: number;
  seed?: number;
  name?: string;
  /**
   * Makes replies end on their own: hidden dimension 0 carries a constant (every token
   * embedding sets it, no block writes to it), and the end-of-text token's output row reads only
   * that dimension with this weight, so its logit is a steady ~2.5 × weight while the word
   * pieces' logits spread with a standard deviation of ~8. Absent: the token's row is zero and
   * generation practically never ends (see below).
   */
  endOfTextWeight?: number;
  /**
   * Writes only the first this-many blocks (the weights of all `blocks` are still drawn, so the
   * embeddings, those blocks and the output layer are the full model's): a layer-truncated copy
   * with the same vocabulary, the cheapest draft model for speculative decoding that agrees with
   * the full one more often than chance. Default: all blocks.
   */
  keepBlocks?: number;
  /**
   * Writes a reranker instead of a chat model: llama.cpp's rank pooling only attaches a
   * classification head for the architectures that load one (bert, modern-bert, neo-bert,
   * qwen3), so this uses `qwen3` (the llama blocks plus per-head q/k norms), `pooling_type` 4
   * (RANK) and a two-label `cls.output` head. Qwen3's rank pooling reads the last token and
   * takes a softmax over the labels, so the score (label 0, "yes") lies strictly between 0 and 1.
   */
  reranker?: boolean;
  /**
   * Writes a "cycle" model whose greedy output is known in advance: every block's output
   * projections (attention output, FFN down) are zero, so the residual stream is just the token
   * embedding (the blocks still compute, at full cost), and the output row of each word of
   * `tinyCycle()` is the embedding of the word before it, so the greedy successor of a cycle word
   * is the next one (the highest logit is the embedding's norm against its own direction, ~n,
   * while the others spread with a standard deviation of ~sqrt(n)). Every other output row is
   * zero, so after any other token the model joins the cycle. A prompt holding a stretch of the
   * cycle is continued along it, which prompt lookup finds in the prompt, and a cycle model of
   * any other size (same vocabulary) agrees with this one token for token: a constructed best
   * case for speculative decoding, not a stand-in for a trained model.
   */
  cycle?: boolean;
  /**
   * Makes the model write these characters as byte tokens: each one's UTF-8 bytes come out as
   * consecutive `<0xNN>` tokens, the way byte-fallback vocabularies write characters they have no
   * piece for. A character's first byte competes with the word pieces (a drawn output row, plus
   * `weight` on the constant dimension of `endOfTextWeight`'s mechanism), and each later byte is
   * all but certain right after the one before: that one's embedding sets a dimension of its own
   * (no block writes it), which only the next byte's output row reads. The characters' bytes
   * must all differ (the current token alone decides which byte comes next).
   */
  byteCharacters?: { characters: string; weight: number };
  /**
   * Word pieces added to the vocabulary (after the others), each favoured like a first byte of
   * `byteCharacters`: e.g. node-llama-cpp's function-call prefix `||call:`, which the plain
   * vocabulary can only spell with `|` byte tokens that never come out of free text.
   */
  extraPieces?: readonly { piece: string; weight: number }[];
}

class ByteWriter {
  private chunks: Buffer[] = [];
  length = 0;
  private push(b: Buffer): void {
    this.chunks.push(b);
    this.length += b.length;
  }
  u32(v: number): void {
    const b = Buffer.alloc(4);
    b.writeUInt32LE(v);
    this.push(b);
  }
  i32(v: number): void {
    const b = Buffer.alloc(4);
    b.writeInt32LE(v);
    this.push(b);
  }
  u64(v: number): void {
    const b = Buffer.alloc(8);
    b.writeBigUInt64LE(BigInt(v));
    this.push(b);
  }
  f32(v: number): void {
    const b = Buffer.alloc(4);
    b.writeFloatLE(v);
    this.push(b);
  }
  str(s: string): void {
    const b = Buffer.from(s, 'utf8');
    this.u64(b.length);
    this.push(b);
  }
  bytes(b: Buffer): void {
    this.push(b);
  }
  pad(): void {
    const rem = this.length % ALIGNMENT;
    if (rem !== 0) this.push(Buffer.alloc(ALIGNMENT - rem));
  }
  toBuffer(): Buffer {
    return Buffer.concat(this.chunks);
  }
}

function writeMeta(w: ByteWriter, key: string, value: MetaValue): void {
  w.str(key);
  switch (value.t) {
    case 'u32': w.u32(enum_.UINT32); w.u32(value.v); break;
    case 'f32': w.u32(enum_.FLOAT32); w.f32(value.v); break;
    case 'bool': w.u32(enum_.BOOL); w.bytes(Buffer.from([value.v ? 1 : 0])); break;
    case 'str': w.u32(enum_.STRING); w.str(value.v); break;
    case 'str[]': w.u32(enum_.ARRAY); w.u32(enum_.STRING); w.u64(value.v.length); for (const s of value.v) w.str(s); break;
    case 'f32[]': w.u32(enum_.ARRAY); w.u32(enum_.FLOAT32); w.u64(value.v.length); for (const x of value.v) w.f32(x); break;
    case 'i32[]': w.u32(enum_.ARRAY); w.u32(enum_.INT32); w.u64(value.v.length); for (const x of value.v) w.i32(x); break;
  }
}

/** mulberry32: small, fast, seedable; quality is ample for random weights (and test bodies). */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = [
  'the', 'a', 'and', 'of', 'to', 'in', 'is', 'it', 'you', 'that', 'he', 'was', 'for', 'on', 'are', 'with',
  'as', 'I', 'his', 'they', 'be', 'at', 'one', 'have', 'this', 'from', 'or', 'had', 'by', 'hot', 'word',
  'but', 'what', 'some', 'we', 'can', 'out', 'other', 'were', 'all', 'there', 'when', 'up', 'use', 'your',
  'how', 'said', 'an', 'each', 'she', 'which', 'do', 'their', 'time', 'if', 'will', 'way', 'about', 'many',
  'then', 'them', 'write', 'would', 'like', 'so', 'these', 'her', 'long', 'make', 'thing', 'see', 'him',
  'two', 'has', 'look', 'more', 'day', 'could', 'go', 'come', 'did', 'number', 'sound', 'no', 'most',
  'people', 'my', 'over', 'know', 'water', 'than', 'call', 'first', 'who', 'may', 'down', 'side', 'been',
  'now', 'find', 'hello', 'world', 'quantum', 'model', 'token', 'local', 'runtime', 'fast',
];

/** The vocabulary: specials, ChatML controls, the 256 byte tokens, then word pieces. */
export function tinyVocabulary(extraPieces: readonly string[] = []): { tokens: string[]; scores: number[]; types: number[] } {
  const tokens: string[] = ['<unk>', '<s>', '</s>', '<|im_start|>', '<|im_end|>'];
  const types: number[] = [2, 3, 3, 3, 3];
  for (let b = 0; b < 256; b++) {
    tokens.push(`<0x${b.toString(16).toUpperCase().padStart(2, '0')}>`);
    types.push(6);
  }
  const pieces = new Set<string>(['▁']);
  for (const c of 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.,!?:;\'"-') {
    pieces.add(c);
    pieces.add(`▁${c}`);
  }
  for (const word of WORDS) pieces.add(`▁${word}`);
  for (const piece of extraPieces) pieces.add(piece);
  for (const p of pieces) {
    tokens.push(p);
    types.push(1);
  }
  // SentencePiece prefers the highest-scoring piece: longer pieces win.
  const scores = tokens.map((t, i) => (types[i] === 1 ? -1000 + [...t].length * 10 - i * 1e-3 : 0));
  return { tokens, scores, types };
}

const CHATML_TEMPLATE =
  "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n'}}{% endfor %}" +
  "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";

/**
 * The cycle of the `cycle` option: the words of WORDS whose piece the tokenizer produces whole
 * (every prefix of it is a piece, so SentencePiece's merges reach it), so text made of them
 * tokenizes back into the same tokens and prompt lookup can match generated tokens to the
 * prompt's. Fixed by the vocabulary alone, so cycle models of every size and seed share it.
 */
export function tinyCycle(): string[] {
  const pieces = new Set(tinyVocabulary().tokens);
  const whole = (piece: string): boolean => [...piece].every((_, i) => i === 0 || pieces.has([...piece].slice(0, i + 1).join('')));
  return [...new Set(WORDS)].filter((word) => whole(`▁${word}`));
}

/** Builds the GGUF bytes in memory. */
export function buildTinyGguf(options: TinyGgufOptions = {}): Buffer {
  const nEmbd = options.embedding ?? 64;
  const nBlocks = options.blocks ?? 2;
  const nHead = options.heads ?? 4;
  const nFf = options.feedForward ?? 128;
  const nCtx = options.contextLength ?? 4096;
  const headDim = nEmbd / nHead;
  const rand = prng(options.seed ?? 1234);
  const reranker = options.reranker === true;
  const arch = reranker ? 'qwen3' : 'llama';
  const vocab = tinyVocabulary(options.extraPieces?.map((p) => p.piece));
  const nVocab = vocab.tokens.length;

  const tensors: { name: string; dims: number[]; data: Float32Array }[] = [];
  const gaussian = (): number => {
    // Irwin–Hall approximation of a standard normal: plenty for random weights.
    let s = 0;
    for (let i = 0; i < 6; i++) s += rand();
    return (s - 3) * Math.SQRT2;
  };
  const matrix = (name: string, cols: number, rows: number, scale: number): void => {
    const data = new Float32Array(cols * rows);
    for (let i = 0; i < data.length; i++) data[i] = gaussian() * scale;
    tensors.push({ name, dims: [cols, rows], data });
  };
  const ones = (name: string, n: number): void => {
    tensors.push({ name, dims: [n], data: new Float32Array(n).fill(1) });
  };

  matrix('token_embd.weight', nEmbd, nVocab, 1);
  for (let b = 0; b < nBlocks; b++) {
    ones(`blk.${b}.attn_norm.weight`, nEmbd);
    matrix(`blk.${b}.attn_q.weight`, nEmbd, nEmbd, 1 / Math.sqrt(nEmbd));
    matrix(`blk.${b}.attn_k.weight`, nEmbd, nEmbd, 1 / Math.sqrt(nEmbd));
    matrix(`blk.${b}.attn_v.weight`, nEmbd, nEmbd, 1 / Math.sqrt(nEmbd));
    matrix(`blk.${b}.attn_output.weight`, nEmbd, nEmbd, 1 / Math.sqrt(nEmbd));
    if (reranker) {
      ones(`blk.${b}.attn_q_norm.weight`, headDim);
      ones(`blk.${b}.attn_k_norm.weight`, headDim);
    }
    ones(`blk.${b}.ffn_norm.weight`, nEmbd);
    matrix(`blk.${b}.ffn_gate.weight`, nEmbd, nFf, 1 / Math.sqrt(nEmbd));
    matrix(`blk.${b}.ffn_up.weight`, nEmbd, nFf, 1 / Math.sqrt(nEmbd));
    matrix(`blk.${b}.ffn_down.weight`, nFf, nEmbd, 1 / Math.sqrt(nFf));
  }
  ones('output_norm.weight', nEmbd);
  matrix('output.weight', nEmbd, nVocab, 1);
  // Zero the output rows of the special and control tokens: their logit is then 0 while the
  // word pieces' logits spread with a standard deviation of ~8, so generation practically
  // never ends on its own. Tests steer the finish reason with max_tokens and stop sequences.
  const output = tensors.at(-1)!.data;
  for (let id = 0; id < nVocab; id++) {
    if (vocab.types[id] !== 1) output.fill(0, id * nEmbd, (id + 1) * nEmbd);
  }
  // The head reads the normed last hidden state (RMS ~1 per dimension): a 1/sqrt(n) scale keeps
  // the yes/no logit gap near 1.4 standard deviations, so scores spread instead of saturating.
  if (reranker) matrix('cls.output.weight', nEmbd, 2, 1 / Math.sqrt(nEmbd));
  if (options.endOfTextWeight !== undefined) {
    const data = (name: string): Float32Array => tensors.find((t) => t.name === name)!.data;
    const embeddings = data('token_embd.weight');
    for (let id = 0; id < nVocab; id++) embeddings[id * nEmbd] = 3;
    // Row 0 of each block's output projections writes dimension 0 of the residual stream.
    for (let b = 0; b < nBlocks; b++) {
      data(`blk.${b}.attn_output.weight`).fill(0, 0, nEmbd);
      data(`blk.${b}.ffn_down.weight`).fill(0, 0, nFf);
    }
    output[EOS_TOKEN_ID * nEmbd] = options.endOfTextWeight;
  }
  if (options.byteCharacters !== undefined || options.extraPieces !== undefined) {
    favourTokens(options, vocab.tokens, tensors, { nEmbd, nFf, nBlocks }, gaussian);
  }

  if (options.cycle === true) {
    const data = (name: string): Float32Array => tensors.find((t) => t.name === name)!.data;
    for (let b = 0; b < nBlocks; b++) {
      data(`blk.${b}.attn_output.weight`).fill(0);
      data(`blk.${b}.ffn_down.weight`).fill(0);
    }
    const embeddings = data('token_embd.weight');
    const ids = tinyCycle().map((word) => vocab.tokens.indexOf(`▁${word}`));
    output.fill(0);
    ids.forEach((id, i) => {
      const next = ids[(i + 1) % ids.length]!;
      output.set(embeddings.subarray(id * nEmbd, (id + 1) * nEmbd), next * nEmbd);
    });
  }

  const kept = Math.min(options.keepBlocks ?? nBlocks, nBlocks);
  if (kept < nBlocks) {
    const dropped = (name: string): boolean => /^blk\.(\d+)\./.test(name) && Number(/^blk\.(\d+)\./.exec(name)![1]) >= kept;
    tensors.splice(0, tensors.length, ...tensors.filter((t) => !dropped(t.name)));
  }

  const w = new ByteWriter();
  const meta: [string, MetaValue][] = [
    ['general.architecture', { t: 'str', v: arch }],
    ['general.name', { t: 'str', v: options.name ?? 'svc-tiny' }],
    ['general.alignment', { t: 'u32', v: ALIGNMENT }],
    ['general.file_type', { t: 'u32', v: 0 }],
    [`${arch}.context_length`, { t: 'u32', v: nCtx }],
    [`${arch}.embedding_length`, { t: 'u32', v: nEmbd }],
    [`${arch}.block_count`, { t: 'u32', v: kept }],
    [`${arch}.feed_forward_length`, { t: 'u32', v: nFf }],
    [`${arch}.attention.head_count`, { t: 'u32', v: nHead }],
    [`${arch}.attention.head_count_kv`, { t: 'u32', v: nHead }],
    [`${arch}.attention.layer_norm_rms_epsilon`, { t: 'f32', v: 1e-5 }],
    [`${arch}.rope.dimension_count`, { t: 'u32', v: headDim }],
    ...(reranker
      ? ([
        [`${arch}.pooling_type`, { t: 'u32', v: 4 }],
        [`${arch}.classifier.output_labels`, { t: 'str[]', v: ['yes', 'no'] }],
      ] satisfies [string, MetaValue][])
      : []),
    ['tokenizer.ggml.model', { t: 'str', v: 'llama' }],
    ['tokenizer.ggml.tokens', { t: 'str[]', v: vocab.tokens }],
    ['tokenizer.ggml.scores', { t: 'f32[]', v: vocab.scores }],
    ['tokenizer.ggml.token_type', { t: 'i32[]', v: vocab.types }],
    ['tokenizer.ggml.bos_token_id', { t: 'u32', v: 1 }],
    ['tokenizer.ggml.eos_token_id', { t: 'u32', v: EOS_TOKEN_ID }],
    ['tokenizer.ggml.unknown_token_id', { t: 'u32', v: 0 }],
    ['tokenizer.ggml.add_bos_token', { t: 'bool', v: true }],
    ['tokenizer.ggml.add_eos_token', { t: 'bool', v: false }],
    ['tokenizer.chat_template', { t: 'str', v: CHATML_TEMPLATE }],
  ];
  w.u32(GGUF_MAGIC);
  w.u32(3);
  w.u64(tensors.length);
  w.u64(meta.length);
  for (const [k, v] of meta) writeMeta(w, k, v);

  let offset = 0;
  const offsets: number[] = [];
  for (const t of tensors) {
    offsets.push(offset);
    const size = t.data.byteLength;
    offset += Math.ceil(size / ALIGNMENT) * ALIGNMENT;
  }
  tensors.forEach((t, i) => {
    w.str(t.name);
    w.u32(t.dims.length);
    for (const d of t.dims) w.u64(d);
    w.u32(GGML_TYPE_F32);
    w.u64(offsets[i]!);
  });
  w.pad();
  for (const t of tensors) {
    w.bytes(Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength));
    w.pad();
  }
  return w.toBuffer();
}

/**
 * The `byteCharacters` and `extraPieces` variants (see TinyGgufOptions): their tokens' output
 * rows, and the dimensions that carry "the previous byte was this one" to the next token. Runs
 * after every other weight is drawn, so the rest of the model is the plain one's.
 */
function favourTokens(
  options: TinyGgufOptions,
  tokens: readonly string[],
  tensors: readonly { name: string; data: Float32Array }[],
  sizes: { nEmbd: number; nFf: number; nBlocks: number },
  gaussian: () => number,
): void {
  const { nEmbd, nFf, nBlocks } = sizes;
  const data = (name: string): Float32Array => tensors.find((t) => t.name === name)!.data;
  const embeddings = data('token_embd.weight');
  const output = data('output.weight');
  const idOf = (token: string): number => {
    const id = tokens.indexOf(token);
    if (id < 0) throw new Error(`no token ${token}`);
    return id;
  };
  // Dimension 0: a constant no block writes (as for endOfTextWeight), read with `weight`.
  const constantDimension = (): void => {
    for (let id = 0; id < tokens.length; id++) embeddings[id * nEmbd] = 3;
    for (let b = 0; b < nBlocks; b++) {
      data(`blk.${b}.attn_output.weight`).fill(0, 0, nEmbd);
      data(`blk.${b}.ffn_down.weight`).fill(0, 0, nFf);
    }
  };
  const favour = (id: number, weight: number): void => {
    for (let i = 0; i < nEmbd; i++) output[id * nEmbd + i] = gaussian();
    output[id * nEmbd] = weight;
  };
  constantDimension();
  for (const { piece, weight } of options.extraPieces ?? []) favour(idOf(piece), weight);
  if (options.byteCharacters === undefined) return;
  const { characters, weight } = options.byteCharacters;
  const byteToken = (b: number): number => idOf(`<0x${b.toString(16).toUpperCase().padStart(2, '0')}>`);
  const seen = new Set<number>();
  let signal = 1;
  for (const character of characters) {
    const bytes = [...Buffer.from(character, 'utf8')];
    for (const b of bytes) {
      if (seen.has(b)) throw new Error(`byteCharacters: byte 0x${b.toString(16)} appears twice`);
      seen.add(b);
    }
    favour(byteToken(bytes[0]!), weight);
    for (let i = 1; i < bytes.length; i++, signal++) {
      if (signal >= nEmbd) throw new Error('byteCharacters: more links than hidden dimensions');
      // Dimension `signal` is 8 after byte i-1 and 0 after any other token; no block writes it,
      // and byte i's output row reads only it, so byte i follows byte i-1 and nothing else.
      for (let id = 0; id < tokens.length; id++) embeddings[id * nEmbd + signal] = 0;
      embeddings[byteToken(bytes[i - 1]!) * nEmbd + signal] = 8;
      for (let b = 0; b < nBlocks; b++) {
        data(`blk.${b}.attn_output.weight`).fill(0, signal * nEmbd, (signal + 1) * nEmbd);
        data(`blk.${b}.ffn_down.weight`).fill(0, signal * nFf, (signal + 1) * nFf);
      }
      const next = byteToken(bytes[i]!);
      output.fill(0, next * nEmbd, (next + 1) * nEmbd);
      output[next * nEmbd + signal] = 40;
    }
  }
}

/** Writes the tiny model to `path` (once; the bytes are deterministic) and returns the path. */
export function writeTinyGguf(path: string, options: TinyGgufOptions = {}): string {
  if (!existsSync(path)) {
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, buildTinyGguf(options));
  }
  return path;
}
