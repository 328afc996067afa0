/**
 * One GGUF model in memory: the weights, one llama.cpp context of `parallel` sequences and what
 * is worth computing once per load (chat template, token bound, compiled grammars). How it is
 * loaded and freed; when that happens is the residency's business (model-residency.ts).
 */
import type * as NodeLlamaCppModule from 'node-llama-cpp';
import type {
  ChatWrapper,
  Llama,
  LlamaContext,
  LlamaContextSequence,
  LlamaEmbeddingContext,
  LlamaGrammar,
  LlamaModel,
  LlamaRankingContext,
} from 'node-llama-cpp';
import { decodeSequencesTogether } from './decode-sequences-together.ts';
import type { LlamaEngineOptions } from './llama-engine-options.ts';
import { disposeDraftModel, loadDraftModel, type DraftModel } from './speculative-decoding.ts';
import { maxBytesPerToken } from './token-budget.ts';

type NodeLlamaCpp = typeof NodeLlamaCppModule;

export interface LoadedLlamaModel {
  /** The node-llama-cpp module, imported on first use. */
  lib: NodeLlamaCpp;
  model: LlamaModel;
  /**
   * The chat template, resolved once per load: resolving it renders the GGUF's Jinja template
   * against every built-in wrapper (100+ ms, synchronous), which LlamaChat would otherwise
   * repeat on every request, on the event loop.
   */
  chatWrapper: ChatWrapper;
  context: LlamaContext;
  embedding?: Promise<LlamaEmbeddingContext>;
  /** A reranker's ranking context (rank pooling), made on its first rerank request. */
  ranking?: Promise<LlamaRankingContext>;
  /** An upper bound on the bytes of text one token stands for (see maxBytesPerToken). */
  maxBytesPerToken: number;
  /** Compiled JSON-schema grammars by schema text, least recently used first (see compiledGrammar). */
  grammars: Map<string, LlamaGrammar>;
  /**
   * Sequences of `context` no request holds, kept for the next one (see chooseSequence). Per
   * load, so a sequence of a context being disposed never serves a request on the next one.
   */
  freeSequences: LlamaContextSequence[];
  /** The draft model for `--speculative draft`, loaded and freed with this one (speculative-decoding.ts). */
  draft?: DraftModel | undefined;
}

const DEFAULT_CONTEXT_CAP = 4096;

/** Tokens per sequence: the configured size, else the model's training context up to DEFAULT_CONTEXT_CAP. */
export function contextSizeFor(model: LlamaModel, options: Pick<LlamaEngineOptions, 'contextSize'>): number {
  return options.contextSize ?? Math.min(model.trainContextSize, DEFAULT_CONTEXT_CAP);
}

/**
 * Loads the GGUF at `path` with a context of `options.parallel` sequences. `chatWrapper`: the
 * template resolved by an earlier load of the same file, reused (resolving is synchronous work).
 */
export async function loadLlamaModel(
  id: string, path: string, binding: () => Promise<Llama>, options: LlamaEngineOptions, chatWrapper: ChatWrapper | undefined,
): Promise<LoadedLlamaModel> {
  const started = performance.now();
  const llama = await binding();
  const model = await llama.loadModel({ modelPath: path });
  try {
    const context = await model.createContext({
      sequences: options.parallel,
      contextSize: contextSizeFor(model, options),
      ...(options.threads !== undefined ? { threads: options.threads } : {}),
    });
    if (!decodeSequencesTogether(context)) {
      options.log.warn({ model: id }, 'node-llama-cpp internals changed: parallel requests may not share decode batches');
    }
    // A draft that fails to load fails this load: the model's dispose below frees its context too.
    const draft = await loadDraftModel(id, llama, options.speculative, context, options.threads, options.log);
    const speculative = options.speculative?.mode === 'draft' && draft === undefined ? 'off' : (options.speculative?.mode ?? 'off');
    options.log.info(
      { model: id, ms: Math.round(performance.now() - started), parallel: options.parallel, contextSize: context.contextSize, speculative },
      'model loaded',
    );
    const lib = await import('node-llama-cpp');
    const tokenizer = model.fileInfo.metadata.tokenizer?.ggml;
    return {
      lib, model, context, chatWrapper: chatWrapper ?? lib.resolveChatWrapper(model), grammars: new Map(), freeSequences: [],
      maxBytesPerToken: maxBytesPerToken(tokenizer?.tokens ?? [], tokenizer?.model), draft,
    };
  } catch (error) {
    await model.dispose();
    throw error;
  }
}

/**
 * Bytes the load holds as node-llama-cpp reports them: the weights (`LlamaModel.size`) and the
 * generation context's state (`LlamaContext.stateSize`, the KV cache of every sequence), and
 * the draft model's two when there is one. Embedding and ranking contexts, made on first use,
 * are not counted.
 */
export function loadedMemoryBytes(loaded: Pick<LoadedLlamaModel, 'model' | 'context' | 'draft'>): number {
  const draft = loaded.draft === undefined ? 0 : loaded.draft.model.size + loaded.draft.context.stateSize;
  return loaded.model.size + loaded.context.stateSize + draft;
}

/** Frees what a load took: the embedding and ranking contexts (if made), the context, the weights, the draft model. */
export async function disposeLoadedLlamaModel(loaded: LoadedLlamaModel): Promise<void> {
  loaded.freeSequences.length = 0;
  const embedding = await loaded.embedding?.catch(() => undefined);
  await embedding?.dispose();
  const ranking = await loaded.ranking?.catch(() => undefined);
  await ranking?.dispose();
  // The context first: disposing its sequences disposes their draft sequences.
  await loaded.context.dispose();
  await loaded.model.dispose();
  await disposeDraftModel(loaded.draft);
}
