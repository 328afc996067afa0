import { z } from 'zod';

/**
 * Request schemas of the OpenAI-shaped local API. Objects are strict: an argument we do not
 * know is a 400 naming it, as OpenAI answers, rather than silently ignored. Arguments OpenAI
 * clients commonly send that we accept but cannot honour beyond their default are listed and
 * checked in the route, with a message that says so.
 */
const nullish = <T extends z.ZodType>(schema: T) => schema.nullish();

const textPart = z.strictObject({ type: z.literal('text'), text: z.string() });
const anyPart = z.looseObject({ type: z.string() });

const messageContent = z.union([z.string(), z.array(z.union([textPart, anyPart]))]);

export const chatMessageSchema = z.looseObject({
  role: z.enum(['system', 'developer', 'user', 'assistant', 'tool', 'function']),
  content: messageContent.nullish(),
  name: z.string().optional(),
});

const stopSchema = nullish(z.union([z.string(), z.array(z.string()).max(4, 'at most 4 stop sequences')]));
const temperature = nullish(z.number().min(0).max(2));
const topP = nullish(z.number().min(0).max(1));
const maxTokens = nullish(z.number().int().min(1));
const penalty = nullish(z.number().min(-2).max(2));
const seed = nullish(z.number().int().min(-(2 ** 53) + 1).max(2 ** 53 - 1));

/** Fields accepted for compatibility whose only supported value is the default / empty. */
const compatibilityFields = {
  logprobs: nullish(z.boolean()),
  top_logprobs: nullish(z.number().int()),
  logit_bias: nullish(z.record(z.string(), z.number())),
  user: nullish(z.string()),
  store: nullish(z.boolean()),
  metadata: nullish(z.record(z.string(), z.string())),
  service_tier: nullish(z.string()),
  parallel_tool_calls: nullish(z.boolean()),
  // Hints OpenAI added for its own models; they change nothing a local model would do.
  reasoning_effort: nullish(z.string()),
  verbosity: nullish(z.string()),
  prompt_cache_key: nullish(z.string()),
  safety_identifier: nullish(z.string()),
  prediction: nullish(z.unknown()),
};

/**
 * Sampling fields of llama.cpp's server and Ollama, accepted on chat and completions as
 * documented extensions (docs/runtime.md) because their users send them. node-llama-cpp 3.22
 * has no locally typical or mirostat sampler: `typical_p` and `mirostat` are accepted at their
 * neutral values only (1 and 0), anything else is refused in samplingFrom, never ignored.
 */
const llamaSamplingFields = {
  top_k: nullish(z.number().int().min(0, 'top_k must be 0 (off) or more').max(2 ** 31 - 1)),
  min_p: nullish(z.number().min(0).max(1)),
  repeat_penalty: nullish(z.number().gt(0, 'repeat_penalty must be greater than 0 (1 = off)').max(10)),
  repeat_last_n: nullish(z.number().int().min(-1, 'repeat_last_n must be -1 (all), 0 (off) or more').max(2 ** 31 - 1)),
  typical_p: nullish(z.number().min(0).max(1)),
  mirostat: nullish(z.number().int().min(0).max(2)),
  mirostat_tau: nullish(z.number().min(0)),
  mirostat_eta: nullish(z.number().min(0)),
};

/** What chat and legacy completions share: the model, sampling, stopping and streaming. */
const generationFields = {
  ...llamaSamplingFields,
  model: z.string().min(1),
  max_tokens: maxTokens,
  temperature,
  top_p: topP,
  seed,
  stop: stopSchema,
  stream: nullish(z.boolean()),
  stream_options: nullish(z.looseObject({ include_usage: z.boolean().optional() })),
  n: nullish(z.number().int().min(1).max(128)),
  frequency_penalty: penalty,
  presence_penalty: penalty,
};

export const chatCompletionRequestSchema = z.strictObject({
  ...generationFields,
  messages: z.array(chatMessageSchema).min(1, 'messages must contain at least one message'),
  max_completion_tokens: maxTokens,
  modalities: nullish(z.array(z.string())),
  audio: nullish(z.unknown()),
  web_search_options: nullish(z.unknown()),
  response_format: nullish(z.looseObject({ type: z.string() })),
  tools: nullish(z.array(z.unknown())),
  tool_choice: nullish(z.unknown()),
  functions: nullish(z.array(z.unknown())),
  function_call: nullish(z.unknown()),
  ...compatibilityFields,
});
export type ChatCompletionRequest = z.infer<typeof chatCompletionRequestSchema>;

export const completionRequestSchema = z.strictObject({
  ...generationFields,
  prompt: z.union([z.string(), z.array(z.string()).min(1).max(32)]),
  echo: nullish(z.boolean()),
  suffix: nullish(z.string()),
  best_of: nullish(z.number().int().min(1)),
  logprobs: nullish(z.number().int().min(0).max(5)),
  logit_bias: nullish(z.record(z.string(), z.number())),
  user: nullish(z.string()),
});
export type CompletionRequest = z.infer<typeof completionRequestSchema>;

export const embeddingRequestSchema = z.strictObject({
  model: z.string().min(1),
  input: z.union([
    z.string(),
    z.array(z.string()).min(1).max(2048),
    z.array(z.number().int().min(0)).min(1),
    z.array(z.array(z.number().int().min(0)).min(1)).min(1).max(2048),
  ]),
  encoding_format: nullish(z.enum(['float', 'base64'])),
  dimensions: nullish(z.number().int().min(1)),
  user: nullish(z.string()),
});
export type EmbeddingRequest = z.infer<typeof embeddingRequestSchema>;

/**
 * Each OpenAI route's body schema by its path, for validating a large body on the intake worker
 * (openai-intake.ts) with the very schema the route uses (request-body.ts checks it is the same).
 */
export const OPENAI_BODY_SCHEMAS: ReadonlyMap<string, z.ZodType> = new Map<string, z.ZodType>([
  ['/v1/chat/completions', chatCompletionRequestSchema],
  ['/v1/completions', completionRequestSchema],
  ['/v1/embeddings', embeddingRequestSchema],
]);
