import type { SamplingOptions } from '../inference/language-model.ts';

/**
 * OpenAI sampling arguments → engine options. When the client sends none, svc samples like
 * llama.cpp's server and Ollama (temperature 0.8, top_p 0.95) rather than OpenAI's 1.0/1.0,
 * which suits small local models better; documented in docs/runtime.md.
 */
export const DEFAULT_TEMPERATURE = 0.8;
export const DEFAULT_TOP_P = 0.95;

interface OpenAISampling {
  temperature?: number | null | undefined;
  top_p?: number | null | undefined;
  seed?: number | null | undefined;
  stop?: string | string[] | null | undefined;
  frequency_penalty?: number | null | undefined;
  presence_penalty?: number | null | undefined;
}

export function samplingFrom(body: OpenAISampling, maxTokens: number | null | undefined): SamplingOptions {
  const stop = body.stop == null ? undefined : (typeof body.stop === 'string' ? [body.stop] : body.stop).filter((s) => s !== '');
  return {
    maxTokens: maxTokens ?? undefined,
    temperature: body.temperature ?? DEFAULT_TEMPERATURE,
    topP: body.top_p ?? DEFAULT_TOP_P,
    seed: body.seed ?? undefined,
    stop,
    frequencyPenalty: body.frequency_penalty ?? undefined,
    presencePenalty: body.presence_penalty ?? undefined,
  };
}
