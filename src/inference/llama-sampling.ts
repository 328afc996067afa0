/**
 * A request's sampling options as node-llama-cpp takes them, and its stop reason as the API
 * reports it: the translation between the OpenAI-shaped options and the binding, kept apart
 * from the host that runs the generation.
 */
import { ApiError } from '../shared/api-error.ts';
import type { FinishReason, GenerateOptions } from './language-model.ts';

/**
 * Sampling when the client sends none: temperature 0.8 and top_p 0.95, as llama.cpp's server
 * and Ollama do, rather than OpenAI's 1.0/1.0, which suits small local models worse.
 * Applied here, not in the route, so upstreams keep their own defaults.
 */
export const DEFAULT_TEMPERATURE = 0.8;
export const DEFAULT_TOP_P = 0.95;

/** The generation options chat and completion share in node-llama-cpp. */
export interface EngineSampling {
  maxTokens: number;
  temperature?: number;
  topP?: number;
  topK?: number;
  minP?: number;
  seed?: number;
  signal?: AbortSignal;
  stopOnAbortSignal?: boolean;
  repeatPenalty?: { frequencyPenalty: number; presencePenalty: number; penalty: number; lastTokens?: number };
  onTextChunk?: (text: string) => void;
}

/**
 * Samplers llama.cpp's server offers that node-llama-cpp 3.22 does not: their neutral value is
 * what every request gets anyway, so it is accepted; any other value would be silently ignored,
 * so it is refused with a message that says why.
 */
export function unavailableSampler(options: GenerateOptions): ApiError | undefined {
  if (options.typicalP !== undefined && options.typicalP !== 1) {
    return ApiError.invalidRequest(
      `typical_p ${options.typicalP} is not available: the llama.cpp binding svc uses (node-llama-cpp 3.22) has no locally typical sampler; only 1 (off) is accepted. top_p or min_p narrow sampling in a similar way.`,
      'typical_p', 'unsupported_value',
    );
  }
  if (options.mirostat !== undefined && options.mirostat !== 0) {
    return ApiError.invalidRequest(
      `mirostat ${options.mirostat} is not available: the llama.cpp binding svc uses (node-llama-cpp 3.22) has no mirostat sampler; only 0 (off) is accepted.`,
      'mirostat', 'unsupported_value',
    );
  }
  return undefined;
}

/**
 * The request's sampling options for a reply of at most `maxTokens` tokens. Stop sequences are
 * not among them: svc matches them itself (stop-sequence-matcher.ts), node-llama-cpp's
 * `customStopTriggers` drop held-back text at `max_tokens`.
 */
export function engineSampling(options: GenerateOptions, maxTokens: number): Omit<EngineSampling, 'onTextChunk'> {
  return {
    maxTokens,
    temperature: options.temperature ?? DEFAULT_TEMPERATURE,
    topP: options.topP ?? DEFAULT_TOP_P,
    ...(options.topK !== undefined ? { topK: options.topK } : {}),
    ...(options.minP !== undefined ? { minP: options.minP } : {}),
    ...(options.seed !== undefined ? { seed: options.seed } : {}),
    ...(options.signal !== undefined ? { signal: options.signal, stopOnAbortSignal: true } : {}),
    ...(options.frequencyPenalty || options.presencePenalty || options.repeatPenalty !== undefined || options.repeatLastN !== undefined
      ? {
          repeatPenalty: {
            frequencyPenalty: options.frequencyPenalty ?? 0,
            presencePenalty: options.presencePenalty ?? 0,
            penalty: options.repeatPenalty ?? 1,
            // node-llama-cpp looks back over generated tokens only, so "all" (-1) is maxTokens,
            // and so is anything larger: llama.cpp allocates a buffer of this many tokens up front
            // (2^31 - 1 took 8 GB and minutes).
            ...(options.repeatLastN !== undefined ? { lastTokens: options.repeatLastN === -1 ? maxTokens : Math.min(options.repeatLastN, maxTokens) } : {}),
          },
        }
      : {}),
  };
}

export function finishReasonOf(stopReason: string): FinishReason {
  if (stopReason === 'maxTokens') return 'length';
  if (stopReason === 'functionCalls') return 'tool_calls';
  if (stopReason === 'abort') return 'abort';
  return 'stop';
}
