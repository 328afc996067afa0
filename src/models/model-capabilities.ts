import type { GgufSummary } from './gguf-header.ts';

export type ModelCapability = 'chat' | 'embeddings' | 'rerank';

/**
 * Architectures llama.cpp runs as encoders (non-causal attention, no generation): the BERT
 * family and T5's encoder, as named in llama.cpp's src/llama-arch.cpp.
 */
const ENCODER_ARCHITECTURES = new Set([
  'bert', 'modern-bert', 'nomic-bert', 'nomic-bert-moe', 'neo-bert', 'jina-bert-v2', 'jina-bert-v3',
  'eurobert', 't5encoder', 'gemma-embedding', 'llama-embed',
]);

/** llama.cpp's LLAMA_POOLING_TYPE_RANK: a reranker's classification head, not an embedding. */
const POOLING_RANK = 4;

/** Whether the file holds something llama.cpp runs as a model (not a LoRA adapter or a vision projector). */
export function isRunnableModel(gguf: GgufSummary): boolean {
  if (gguf.type !== null && gguf.type !== 'model') return false;
  return gguf.architecture !== 'clip';
}

export function isEncoder(gguf: GgufSummary): boolean {
  return gguf.causalAttention === false || (gguf.architecture !== null && ENCODER_ARCHITECTURES.has(gguf.architecture));
}

/**
 * What a model is built for, from its metadata (the rule Ollama's `capabilities` follows for
 * embeddings, extended to encoders that declare no pooling):
 * - `embeddings` when the file sets `<arch>.pooling_type` (other than rank) or the architecture
 *   is an encoder;
 * - `chat` when the file carries a chat template, or the architecture is a decoder (node-llama-cpp
 *   then picks a chat format for it).
 * - `rerank` alone for a reranker: pooling type rank, which llama.cpp's converters write for
 *   cross-encoders (bge-reranker, jina-reranker, Qwen3-Reranker) beside their classification
 *   head. `/v1/rerank` serves only these; chat and embeddings on them are not refused but mean
 *   nothing (the head's output is one score, not a vector or a next token).
 * Beyond rerank this describes the model; svc does not refuse requests by it (any decoder can
 * also produce embeddings through llama.cpp).
 */
export function modelCapabilities(gguf: GgufSummary): ModelCapability[] {
  if (gguf.poolingType === POOLING_RANK) return ['rerank'];
  const encoder = isEncoder(gguf);
  const capabilities: ModelCapability[] = [];
  if (gguf.hasChatTemplate || !encoder) capabilities.push('chat');
  if (encoder || gguf.poolingType !== null) capabilities.push('embeddings');
  return capabilities;
}

/**
 * The parameter count as people write it: the file's `general.size_label` when it has one
 * (`8B`, `8x7B`), otherwise counted from the tensors in Ollama's style (`8.0B`, `494.03M`).
 */
export function parameterSize(gguf: GgufSummary, parameterCount: number = gguf.parameterCount): string | null {
  if (gguf.sizeLabel !== null && gguf.sizeLabel !== '') return gguf.sizeLabel;
  if (parameterCount <= 0) return null;
  const scaled = (n: number, unit: string, decimals: number) => `${Number.isInteger(n) ? n.toFixed(0) : n.toFixed(decimals)}${unit}`;
  if (parameterCount >= 1e9) return scaled(parameterCount / 1e9, 'B', 1);
  if (parameterCount >= 1e6) return scaled(parameterCount / 1e6, 'M', 2);
  if (parameterCount >= 1e3) return `${(parameterCount / 1e3).toFixed(0)}K`;
  return String(parameterCount);
}
