/**
 * Speculative decoding on the local engine (`--speculative`, docs/runtime.md): a token predictor
 * guesses the next few tokens, the model checks them all in one batch, and every guess it would
 * have sampled itself is a token it need not decode alone. The model's own sampling decides each
 * token either way, so predictions change how fast a reply comes, not what it says.
 * node-llama-cpp does the checking; this file chooses the predictor, loads the draft model beside
 * a model (and frees it with it), and counts what was predicted in vain.
 */
import type * as NodeLlamaCppModule from 'node-llama-cpp';
import type { Llama, LlamaContext, LlamaContextSequence, LlamaModel } from 'node-llama-cpp';
import type { EngineLogger, SpeculativeSettings } from './llama-engine-options.ts';

type NodeLlamaCpp = typeof NodeLlamaCppModule;

/** A draft model in memory: its weights and a context of as many sequences as its model's. */
export interface DraftModel {
  model: LlamaModel;
  context: LlamaContext;
}

/** What a vocabulary check compares: the token texts and the special tokens generation turns on. */
export interface VocabularyFacts {
  tokens: readonly string[];
  bos: number | null;
  eos: number | null;
}

export function vocabularyFacts(model: LlamaModel): VocabularyFacts {
  return { tokens: model.fileInfo.metadata.tokenizer?.ggml?.tokens ?? [], bos: model.tokens.bos, eos: model.tokens.eos };
}

/**
 * Why `draft` cannot draft for `main`, or undefined when it can. The draft's token ids are fed
 * to the main model as they are, so the two vocabularies must be the same token for token.
 */
export function vocabularyMismatch(main: VocabularyFacts, draft: VocabularyFacts): string | undefined {
  if (main.tokens.length !== draft.tokens.length) return `the vocabularies differ in size (${main.tokens.length} and ${draft.tokens.length} tokens)`;
  const different = main.tokens.findIndex((token, id) => draft.tokens[id] !== token);
  if (different >= 0) return `token ${different} differs (${JSON.stringify(main.tokens[different])} and ${JSON.stringify(draft.tokens[different])})`;
  if (main.bos !== draft.bos || main.eos !== draft.eos) return 'the beginning or end-of-text tokens differ';
  return undefined;
}

/**
 * The draft model for `main` (`--speculative draft`), with a context shaped like the main one's;
 * undefined when speculation does not use one, or when its vocabulary is not the main model's:
 * that model then generates without speculation (and a warning says why), since one
 * `--draft-model` serves every local model and need not suit each of them.
 */
export async function loadDraftModel(
  id: string, llama: Llama, settings: SpeculativeSettings | undefined, main: LlamaContext, threads: number | undefined, log: EngineLogger,
): Promise<DraftModel | undefined> {
  if (settings?.mode !== 'draft') return undefined;
  const model = await llama.loadModel({ modelPath: settings.draftModelPath });
  try {
    const mismatch = vocabularyMismatch(vocabularyFacts(main.model), vocabularyFacts(model));
    if (mismatch !== undefined) {
      log.warn({ model: id, draftModel: settings.draftModelPath }, `--draft-model cannot draft for ${id}: ${mismatch}; it generates without speculation`);
      await model.dispose();
      return undefined;
    }
    const context = await model.createContext({
      sequences: main.totalSequences,
      contextSize: main.contextSize,
      ...(threads !== undefined ? { threads } : {}),
    });
    return { model, context };
  } catch (error) {
    await model.dispose();
    throw error;
  }
}

export async function disposeDraftModel(draft: DraftModel | undefined): Promise<void> {
  await draft?.context.dispose();
  await draft?.model.dispose();
}

/**
 * How the draft drafts. The target waits for at least `minTokens` guesses (node-llama-cpp's
 * default, 0, never waits, and a draft that runs beside its target then rarely has a guess
 * ready) and takes at most `maxTokens`, llama.cpp's server's bounds in spirit. The draft samples
 * without the request's penalties and token bias: those are callbacks of the request's
 * LlamaChat or plain-completion loop, which a draft still running after the reply (node-llama-cpp
 * stops it asynchronously) would call once they are disposed, and throw where nothing catches.
 * Guesses made without them are checked by the model with them, so replies stay the same.
 */
const DRAFT_OPTIONS = {
  minTokens: 4,
  maxTokens: 8,
  evaluateOptions: { repeatPenalty: undefined, dryRepeatPenalty: undefined, tokenBias: undefined },
};

/**
 * A new sequence of `context` with the predictor `settings` ask for. A draft sequence is
 * disposed with the sequence it drafts for (node-llama-cpp disposes the predictor, not the
 * draft's sequence), so the draft context never runs out of sequences.
 */
export function newSequence(lib: NodeLlamaCpp, context: LlamaContext, settings: SpeculativeSettings | undefined, draft: DraftModel | undefined): LlamaContextSequence {
  if (settings?.mode === 'lookup') return context.getSequence({ tokenPredictor: new lib.InputLookupTokenPredictor() });
  if (draft === undefined) return context.getSequence();
  const draftSequence = draft.context.getSequence();
  const sequence = context.getSequence({ tokenPredictor: new lib.DraftSequenceTokenPredictor(draftSequence, DRAFT_OPTIONS) });
  sequence.onDispose.createListener(() => draftSequence.dispose());
  return sequence;
}

/**
 * Tokens a sequence evaluated for predictions that were refuted, or checked and never used:
 * its token meter counts them as output, but they are no part of any reply.
 */
export function wastedPredictions(sequence: LlamaContextSequence): number {
  const predictions = sequence.tokenPredictions;
  return predictions.refuted + predictions.unused;
}
