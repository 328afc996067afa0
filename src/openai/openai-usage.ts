import type { GenerateResult } from '../inference/language-model.ts';

/** Token counts as OpenAI reports them, on a whole answer and on a stream's usage chunk. */
export interface OpenAIUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

/** The usage of all a request's choices together. */
export function toOpenAIUsage(results: readonly GenerateResult[]): OpenAIUsage {
  const prompt = results.reduce((n, r) => n + r.usage.promptTokens, 0);
  const completion = results.reduce((n, r) => n + r.usage.completionTokens, 0);
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
}
