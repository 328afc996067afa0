import type { LlamaContextSequence, LlamaModel, Token } from 'node-llama-cpp';
import type { EngineSampling } from './llama-sampling.ts';

/**
 * A plain completion (`/v1/completions`) as svc's own token loop on the context sequence, in
 * place of node-llama-cpp's LlamaCompletion: that one (3.22) holds back a token whose text ends
 * inside a multi-byte UTF-8 character, skips its maxTokens check meanwhile (sampling a token
 * past the limit) and, when maxTokens ends the generation, never releases what it holds: the
 * last complete character of a reply, or the space after it, was lost (`…H` for `…H😀 `).
 * Here every sampled token is seen: the reply is exactly the text of the first `maxTokens`
 * tokens, less only a character they end inside of. Sampling is LlamaCompletion's: the same
 * prompt tokens (beginning token, leading space trimmed), the same evaluate options, EOG tokens
 * (and Gemma's extra ones) end it, and the sequence's cached prefix is reused the same way.
 */
export interface PlainCompletion {
  text: string;
  /** Named as node-llama-cpp names them: `eogToken`, `maxTokens` or `abort`. */
  stopReason: 'eogToken' | 'maxTokens' | 'abort';
}

/** The prompt's tokens as LlamaCompletion evaluates them: its beginning token, then the text's. */
export function completionPromptTokens(model: LlamaModel, prompt: string): Token[] {
  const first = beginningToken(model);
  if (first === null) return model.tokenize(prompt, false);
  return [first, ...model.tokenize(prompt, false, 'trimLeadingSpace')];
}

/**
 * Generates at most `sampling.maxTokens` tokens after `prompt`. The caller keeps prompt and
 * reply within the context (token-budget.ts), so no context shift is ever needed: the last
 * token allowed is sampled, never evaluated.
 */
export async function generatePlainCompletion(sequence: LlamaContextSequence, prompt: readonly Token[], sampling: EngineSampling): Promise<PlainCompletion> {
  const { model } = sequence;
  const { maxTokens, signal, onTextChunk, repeatPenalty } = sampling;
  const extraEos = extraEndTokens(model);
  const generated: Token[] = [];
  /** How many of `generated` have had their text released. */
  let released = 0;
  let text = '';
  /** The text of the tokens past `released`: it ends inside a character. */
  let held = '';
  const release = (chunk: string): void => {
    text += chunk;
    if (chunk !== '') onTextChunk?.(chunk);
  };
  // A function, not a property read: TypeScript would keep the first read's narrowing across awaits.
  const aborted = (): boolean => signal?.aborted === true;
  if (aborted()) return { text, stopReason: 'abort' };

  // Reuse what the sequence holds of this prompt; at least one token is evaluated to sample from.
  await sequence.adaptStateToTokens(prompt.slice(0, -1), false);
  const input = prompt.slice(sequence.nextTokenIndex);
  sequence.tokenPredictor?.updateInputTokens?.(prompt.slice());
  const newline = model.tokens.nl;
  const lastTokens = repeatPenalty?.lastTokens ?? 64;
  const tokens = sequence.evaluate(input, {
    temperature: sampling.temperature,
    minP: sampling.minP,
    topK: sampling.topK,
    topP: sampling.topP,
    seed: sampling.seed,
    ...(repeatPenalty !== undefined && lastTokens > 0
      ? {
          repeatPenalty: {
            // Newlines are not punished, as LlamaCompletion does by default.
            punishTokens: () => generated.slice(-lastTokens).filter((t) => t !== newline),
            maxPunishTokens: lastTokens,
            penalty: repeatPenalty.penalty,
            frequencyPenalty: repeatPenalty.frequencyPenalty,
            presencePenalty: repeatPenalty.presencePenalty,
          },
        }
      : {}),
    yieldEogToken: true,
  });
  for await (const token of tokens) {
    // The end: the complete characters of what is still held are the reply's too.
    if (model.isEogToken(token) || extraEos.has(token)) {
      release(trimIncomplete(held));
      return { text, stopReason: 'eogToken' };
    }
    generated.push(token);
    // The text of the tokens not yet released, read after the last released ones (a SentencePiece
    // `▁` alone reads as nothing, after a word as a space). Held while it ends inside a character.
    const pending = model.detokenize(generated.slice(released), false, generated.slice(Math.max(0, released - 3), released));
    if (pending.endsWith(REPLACEMENT)) held = pending;
    else {
      released = generated.length;
      held = '';
      release(pending);
    }
    if (generated.length >= maxTokens) {
      // Cut by the limit: likewise.
      release(trimIncomplete(held));
      return { text, stopReason: 'maxTokens' };
    }
    if (aborted()) return { text, stopReason: 'abort' };
  }
  // evaluate() ends only when the sequence is disposed.
  return { text, stopReason: 'abort' };
}

/** What detokenizing bytes that end inside a character leaves at the end. */
const REPLACEMENT = '\uFFFD';

function trimIncomplete(text: string): string {
  let end = text.length;
  while (end > 0 && text[end - 1] === REPLACEMENT) end--;
  return text.slice(0, end);
}

/** node-llama-cpp's resolveBeginningTokenToPrepend (not exported). */
function beginningToken(model: LlamaModel): Token | null {
  const type: string = model.vocabularyType;
  if (type === 'rwkv' || type === 'ugm') return null;
  if (type === 'wpm') return model.tokens.bos;
  return model.tokens.shouldPrependBosToken ? model.tokens.bos : null;
}

const extraEndTokensOf = new WeakMap<LlamaModel, ReadonlySet<Token>>();

/**
 * Gemma's `<|file_separator|>` and `<|fim_prefix|>`, which end a plain completion as
 * LlamaCompletion's getExtraCompletionEosTokens has it; found once per model (a scan of the
 * vocabulary).
 */
function extraEndTokens(model: LlamaModel): ReadonlySet<Token> {
  let found = extraEndTokensOf.get(model);
  if (found !== undefined) return found;
  const tokens = new Set<Token>();
  const architecture: string | undefined = model.fileInfo.metadata?.general?.architecture;
  if (architecture === 'gemma' || architecture === 'gemma2') {
    for (const token of model.iterateAllTokens()) {
      const text = model.detokenize([token], true);
      if (text === '<|file_separator|>' || text === '<|fim_prefix|>') tokens.add(token);
      if (tokens.size === 2) break;
    }
  }
  found = tokens;
  extraEndTokensOf.set(model, found);
  return found;
}
