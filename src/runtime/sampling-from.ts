import type { SamplingOptions } from '../inference/language-model.ts';
import { ApiError } from '../shared/api-error.ts';

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
  top_k?: number | null | undefined;
  min_p?: number | null | undefined;
  repeat_penalty?: number | null | undefined;
  repeat_last_n?: number | null | undefined;
  typical_p?: number | null | undefined;
  mirostat?: number | null | undefined;
}

/**
 * llama.cpp fields the engine (node-llama-cpp 3.22) has no sampler for: their neutral value is
 * what every request gets anyway, so it is accepted; any other value would be silently ignored,
 * so it is refused with a message that says why.
 */
function refuseUnavailableSamplers(body: OpenAISampling): void {
  if (body.typical_p != null && body.typical_p !== 1) {
    throw ApiError.invalidRequest(
      `typical_p ${body.typical_p} is not available: the llama.cpp binding svc uses (node-llama-cpp 3.22) has no locally typical sampler; only 1 (off) is accepted. top_p or min_p narrow sampling in a similar way.`,
      'typical_p', 'unsupported_value',
    );
  }
  if (body.mirostat != null && body.mirostat !== 0) {
    throw ApiError.invalidRequest(
      `mirostat ${body.mirostat} is not available: the llama.cpp binding svc uses (node-llama-cpp 3.22) has no mirostat sampler; only 0 (off) is accepted.`,
      'mirostat', 'unsupported_value',
    );
  }
}

export function samplingFrom(body: OpenAISampling, maxTokens: number | null | undefined): SamplingOptions {
  refuseUnavailableSamplers(body);
  const stop = body.stop == null ? undefined : (typeof body.stop === 'string' ? [body.stop] : body.stop).filter((s) => s !== '');
  return {
    maxTokens: maxTokens ?? undefined,
    temperature: body.temperature ?? DEFAULT_TEMPERATURE,
    topP: body.top_p ?? DEFAULT_TOP_P,
    seed: body.seed ?? undefined,
    stop,
    frequencyPenalty: body.frequency_penalty ?? undefined,
    presencePenalty: body.presence_penalty ?? undefined,
    topK: body.top_k ?? undefined,
    minP: body.min_p ?? undefined,
    repeatPenalty: body.repeat_penalty ?? undefined,
    repeatLastN: body.repeat_last_n ?? undefined,
  };
}
