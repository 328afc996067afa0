import type { ChatMessage, ChatOptions, LanguageModel } from '../inference/language-model.ts';

/** Thrown from onPromptTokens to stop the engine once it has counted: nothing is evaluated. */
const COUNTED = new Error('prompt counted');

/**
 * The prompt's size in tokens as the model will read it: chat template, system prompt and tool
 * definitions included (`count_tokens`). The llama.cpp engine counts before evaluating anything
 * and is stopped there through onPromptTokens. An upstream cannot count without answering, so it
 * is asked for one token and its reported prompt usage is the count (0 if it reports none).
 */
export async function countPromptTokens(model: LanguageModel, messages: readonly ChatMessage[], options: ChatOptions): Promise<number> {
  let counted: number | undefined;
  try {
    const result = await model.chat(messages, {
      ...options,
      maxTokens: 1,
      onPromptTokens: (tokens) => {
        counted = tokens;
        throw COUNTED;
      },
    });
    return result.usage.promptTokens;
  } catch (error) {
    if (error === COUNTED && counted !== undefined) return counted;
    throw error;
  }
}
