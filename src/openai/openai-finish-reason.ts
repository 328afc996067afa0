import type { FinishReason } from '../inference/language-model.ts';

/** The finish reasons OpenAI's clients know: an engine's `abort` is not one of them. */
export type OpenAIFinishReason = Exclude<FinishReason, 'abort'>;

/** An aborted generation is reported as `stop`: OpenAI has no finish reason for it. */
export function openAIFinishReason(reason: FinishReason): OpenAIFinishReason {
  return reason === 'abort' ? 'stop' : reason;
}
