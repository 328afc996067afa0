import type { SamplingOptions } from '../inference/language-model.ts';

/**
 * OpenAI sampling arguments → engine options. What the client leaves out stays undefined:
 * each engine applies its own defaults (the llama.cpp engine samples like llama.cpp's server
 * and Ollama, see inference/llama-sampling.ts; an upstream applies its own, e.g. an Ollama Modelfile's).
 */
interface OpenAISampling {
  temperature?: number | null | undefined;
  top_p?: number | null | undefined;
  seed?: number | null | undefined;
  stop?: string | string[] | null | undefined;
  frequency_penalty?: number | null | undefined;
  presence_penalty?: number | null | undefined;
  top_k?: number | null | undefined;
  min_p?: number | null | undefined;
  repeat_penalty?: number | null | undefined;
  repeat_last_n?: number | null | undefined;
  typical_p?: number | null | undefined;
  mirostat?: number | null | undefined;
  mirostat_tau?: number | null | undefined;
  mirostat_eta?: number | null | undefined;
}

export function samplingFrom(body: OpenAISampling, maxTokens: number | null | undefined): SamplingOptions {
  const stop = body.stop == null ? undefined : (typeof body.stop === 'string' ? [body.stop] : body.stop).filter((s) => s !== '');
  return {
    maxTokens: maxTokens ?? undefined,
    temperature: body.temperature ?? undefined,
    topP: body.top_p ?? undefined,
    seed: body.seed ?? undefined,
    stop,
    frequencyPenalty: body.frequency_penalty ?? undefined,
    presencePenalty: body.presence_penalty ?? undefined,
    topK: body.top_k ?? undefined,
    minP: body.min_p ?? undefined,
    repeatPenalty: body.repeat_penalty ?? undefined,
    repeatLastN: body.repeat_last_n ?? undefined,
    typicalP: body.typical_p ?? undefined,
    mirostat: body.mirostat ?? undefined,
    mirostatTau: body.mirostat_tau ?? undefined,
    mirostatEta: body.mirostat_eta ?? undefined,
  };
}
