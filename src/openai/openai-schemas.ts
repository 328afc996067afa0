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

/** A function call in an assistant message, as clients send the conversation back. */
const toolCallSchema = z.looseObject({
  id: z.string().min(1),
  type: z.literal('function'),
  function: z.looseObject({ name: z.string().min(1), arguments: z.string() }),
});

export const chatMessageSchema = z.looseObject({
  role: z.enum(['system', 'developer', 'user', 'assistant', 'tool', 'function']),
  content: messageContent.nullish(),
  name: nullish(z.string()),
  tool_calls: nullish(z.array(toolCallSchema)),
  tool_call_id: nullish(z.string().min(1)),
});

/** OpenAI's rule for function names; also what every chat template can render safely. */
export const functionNameSchema = z.string().regex(/^[a-zA-Z0-9_-]{1,64}$/, 'function names are 1 to 64 letters, digits, underscores or dashes');

/** A JSON Schema object (checked further where it is turned into a grammar). */
const jsonSchemaObject = z.record(z.string(), z.unknown());

export const functionToolSchema = z.strictObject({
  type: z.literal('function'),
  function: z.strictObject({
    name: functionNameSchema,
    description: nullish(z.string()),
    parameters: nullish(jsonSchemaObject),
    strict: nullish(z.boolean()),
  }),
});

export const toolChoiceSchema = z.union([
  z.enum(['auto', 'none', 'required']),
  z.strictObject({ type: z.literal('function'), function: z.strictObject({ name: z.string() }) }),
]);

export const responseFormatSchema = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('text') }),
  z.strictObject({ type: z.literal('json_object') }),
  z.strictObject({
    type: z.literal('json_schema'),
    json_schema: z.strictObject({
      name: z.string().regex(/^[a-zA-Z0-9_-]{1,64}$/, 'json_schema.name is 1 to 64 letters, digits, underscores or dashes'),
      description: nullish(z.string()),
      schema: nullish(jsonSchemaObject),
      strict: nullish(z.boolean()),
    }),
  }),
]);

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
 * neutral values only (1 and 0) by the llama.cpp engine, which refuses anything else rather than
 * ignore it; upstreams receive them as sent.
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
  parallel_tool_calls: nullish(z.boolean()),
  max_completion_tokens: maxTokens,
  modalities: nullish(z.array(z.string())),
  audio: nullish(z.unknown()),
  web_search_options: nullish(z.unknown()),
  response_format: nullish(responseFormatSchema),
  tools: nullish(z.array(functionToolSchema).max(128, 'at most 128 tools')),
  tool_choice: nullish(toolChoiceSchema),
  // The deprecated forms of tools; refused in the route with a pointer to `tools`.
  functions: nullish(z.array(z.unknown())),
  function_call: nullish(z.unknown()),
  // svc's extension: retrieval from knowledge spaces (docs/spaces.md). OpenAI clients send it
  // as an extra body field; the hosted tier refuses it (spaces live on the user's machine).
  spaces: nullish(z.array(z.string().min(1).max(64)).min(1, 'spaces names at least one space').max(16, 'at most 16 spaces')),
  retrieval: nullish(z.strictObject({
    top_k: nullish(z.number().int().min(1).max(20)),
    mode: nullish(z.enum(['hybrid', 'bm25', 'dense'])),
  })),
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

/** Text a Responses message carries: the user's `input_text`, or an earlier reply's `output_text`. */
const responseTextPart = z.looseObject({ type: z.enum(['input_text', 'output_text']), text: z.string() });

/** Items of a Responses `input` array (a message without `type` is a message, as OpenAI reads it). */
const responseInputItemSchema = z.preprocess(
  (item) => (typeof item === 'object' && item !== null && !Array.isArray(item) && !('type' in item) ? { ...item, type: 'message' } : item),
  z.discriminatedUnion('type', [
    z.looseObject({
      type: z.literal('message'),
      role: z.enum(['user', 'assistant', 'system', 'developer']),
      // Image, file and audio parts are refused in the route with a message naming them.
      content: z.union([z.string(), z.array(z.union([responseTextPart, anyPart]))]),
    }),
    z.looseObject({ type: z.literal('function_call'), call_id: z.string().min(1), name: z.string().min(1), arguments: z.string() }),
    z.looseObject({
      type: z.literal('function_call_output'),
      call_id: z.string().min(1),
      output: z.union([z.string(), z.array(z.union([responseTextPart, anyPart]))]),
    }),
    // A pointer to an item OpenAI stored; refused in the route (svc keeps no state).
    z.looseObject({ type: z.literal('item_reference'), id: z.string() }),
    // The summary `POST /v1/responses/compact` returned (response-compaction.ts reads it).
    z.looseObject({ type: z.literal('compaction'), encrypted_content: z.string(), id: nullish(z.string()) }),
  ]),
);
export type ResponseInputItem = z.output<typeof responseInputItemSchema>;

/** A Responses tool: the flat function shape; other tool types are refused in the route by name. */
export const responseFunctionToolSchema = z.strictObject({
  type: z.literal('function'),
  name: functionNameSchema,
  description: nullish(z.string()),
  parameters: nullish(jsonSchemaObject),
  strict: nullish(z.boolean()),
});

export const responseTextFormatSchema = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('text') }),
  z.strictObject({ type: z.literal('json_object') }),
  z.strictObject({
    type: z.literal('json_schema'),
    name: z.string().regex(/^[a-zA-Z0-9_-]{1,64}$/, 'format.name is 1 to 64 letters, digits, underscores or dashes'),
    description: nullish(z.string()),
    schema: jsonSchemaObject,
    strict: nullish(z.boolean()),
  }),
]);

/**
 * `POST /v1/responses` (OpenAI's Responses API), stateless: what needs OpenAI's stored state
 * (`store: true`, `previous_response_id`, `conversation`, `background`, `prompt`) is accepted by
 * the schema only to be refused in the route with a message that says why.
 */
export const responseRequestSchema = z.strictObject({
  model: z.string().min(1),
  // A string is one user message, as OpenAI reads it (one array schema gives precise errors).
  input: z.preprocess((input) => (typeof input === 'string' ? [{ type: 'message', role: 'user', content: input }] : input), z.array(responseInputItemSchema)),
  instructions: nullish(z.string()),
  tools: nullish(z.array(z.looseObject({ type: z.string() })).max(128, 'at most 128 tools')),
  tool_choice: nullish(z.union([
    z.enum(['auto', 'none', 'required']),
    z.strictObject({ type: z.literal('function'), name: z.string() }),
    // Hosted-tool and allowed-tools choices: refused in the route by type.
    z.looseObject({ type: z.string() }),
  ])),
  parallel_tool_calls: nullish(z.boolean()),
  max_tool_calls: nullish(z.number().int().min(1)),
  text: nullish(z.strictObject({
    format: nullish(responseTextFormatSchema),
    verbosity: nullish(z.string()),
  })),
  max_output_tokens: maxTokens,
  temperature,
  top_p: topP,
  // Open Responses' CreateResponseBody carries the chat penalties too.
  frequency_penalty: penalty,
  presence_penalty: penalty,
  stream: nullish(z.boolean()),
  stream_options: nullish(z.looseObject({})),
  store: nullish(z.boolean()),
  previous_response_id: nullish(z.string()),
  conversation: nullish(z.unknown()),
  background: nullish(z.boolean()),
  prompt: nullish(z.unknown()),
  include: nullish(z.array(z.string())),
  top_logprobs: nullish(z.number().int()),
  truncation: nullish(z.enum(['auto', 'disabled'])),
  reasoning: nullish(z.looseObject({})),
  metadata: nullish(z.record(z.string(), z.string())),
  user: nullish(z.string()),
  service_tier: nullish(z.string()),
  safety_identifier: nullish(z.string()),
  prompt_cache_key: nullish(z.string()),
  prompt_cache_retention: nullish(z.string()),
});
export type ResponseRequest = z.infer<typeof responseRequestSchema>;

/**
 * `POST /v1/responses/compact` (Open Responses' CompactResponseMethodPublicBody): the
 * conversation to compact, as `input` items (or a string) and `instructions`. Over HTTP svc
 * remembers no response, so `previous_response_id` is refused in the route.
 */
export const responseCompactRequestSchema = z.strictObject({
  model: z.string().min(1),
  input: nullish(responseRequestSchema.shape.input),
  instructions: nullish(z.string()),
  previous_response_id: nullish(z.string()),
  prompt_cache_key: nullish(z.string()),
});
export type ResponseCompactRequest = z.infer<typeof responseCompactRequestSchema>;

/** `GET /v1/responses/{id}/input_items`'s query (OpenAI's cursor page: `after` an item id, `limit`, `order`). */
export const inputItemsQuerySchema = z.strictObject({
  after: z.string().min(1).optional(),
  limit: z.coerce.number().int().min(1).max(100).default(20),
  order: z.enum(['asc', 'desc']).default('desc'),
  // The SDK sends include[] for extra fields (encrypted reasoning, logprobs): none exist locally, so any is refused.
  'include[]': z.never().optional(),
  include: z.never().optional(),
});

/**
 * Each OpenAI route's body schema by its path, for validating a large body on the intake worker
 * (openai-intake.ts) with the very schema the route uses (request-body.ts checks it is the same).
 */
export const OPENAI_BODY_SCHEMAS: ReadonlyMap<string, z.ZodType> = new Map<string, z.ZodType>([
  ['/v1/chat/completions', chatCompletionRequestSchema],
  ['/v1/completions', completionRequestSchema],
  ['/v1/embeddings', embeddingRequestSchema],
  ['/v1/responses', responseRequestSchema],
  ['/v1/responses/compact', responseCompactRequestSchema],
]);
