import { z } from 'zod';

/**
 * What an OpenAI-compatible upstream sends back, as schemas. Upstream answers are parsed,
 * never trusted (vercel/ai's rule), but the schemas are lenient where real servers differ
 * from OpenAI and from each other: Ollama, vLLM, llama-server, SGLang and hosted APIs leave
 * out `index`, send `choices: null`, put usage first, last or in every chunk, stream a whole
 * tool call in one delta, and add fields of their own (`timings`, `reasoning_content`,
 * `prompt_filter_results`), which are ignored. What the code reads is typed and checked.
 */

const count = z.number().int().nonnegative();

/** Token counts; some servers add fields (`prompt_tokens_details`), some leave one out. */
export const upstreamUsageSchema = z.looseObject({
  prompt_tokens: count.nullish(),
  completion_tokens: count.nullish(),
});

/** Ollama's native form sends `arguments` as an object; OpenAI's (and ours) is JSON text. */
const argumentsSchema = z.union([z.string(), z.record(z.string(), z.unknown())]).nullish();

export const upstreamToolCallDeltaSchema = z.looseObject({
  index: count.nullish(),
  id: z.string().nullish(),
  type: z.string().nullish(),
  function: z.looseObject({ name: z.string().nullish(), arguments: argumentsSchema }).nullish(),
});
export type UpstreamToolCallDelta = z.infer<typeof upstreamToolCallDeltaSchema>;

const upstreamDeltaSchema = z.looseObject({
  content: z.string().nullish(),
  refusal: z.string().nullish(),
  tool_calls: z.array(upstreamToolCallDeltaSchema).nullish(),
  // The deprecated single-function form some servers still stream.
  function_call: z.looseObject({ name: z.string().nullish(), arguments: argumentsSchema }).nullish(),
});

const upstreamChoiceSchema = z.looseObject({
  index: count.nullish(),
  /** Chat chunks. */
  delta: upstreamDeltaSchema.nullish(),
  /** Legacy completion chunks. */
  text: z.string().nullish(),
  finish_reason: z.string().nullish(),
});

/** The error object OpenAI puts in a body or a stream event; others send a bare string. */
const upstreamErrorObject = z.looseObject({
  message: z.unknown().optional(),
  type: z.unknown().optional(),
  code: z.unknown().optional(),
});

/** One `data:` event of a chat or completion stream. */
export const upstreamChunkSchema = z.looseObject({
  choices: z.array(upstreamChoiceSchema).nullish(),
  usage: upstreamUsageSchema.nullish(),
  error: z.union([upstreamErrorObject, z.string()]).nullish(),
  /** vLLM's error form: `{"object": "error", "message": …}`. */
  object: z.string().nullish(),
  message: z.unknown().optional(),
});
export type UpstreamChunk = z.infer<typeof upstreamChunkSchema>;

/** `GET /v1/models`. Ollama and vLLM add fields; some servers omit `created`. */
export const upstreamModelListSchema = z.looseObject({
  data: z.array(z.looseObject({
    id: z.string().min(1).max(512),
    created: z.number().nullish(),
  })).max(10_000),
});

/**
 * `POST /v1/embeddings`. Vectors are numbers, or base64 float32 when a server ignores the
 * `encoding_format: "float"` we ask for.
 */
export const upstreamEmbeddingsSchema = z.looseObject({
  data: z.array(z.looseObject({
    index: count.nullish(),
    embedding: z.union([z.array(z.number()), z.string()]),
  })),
  usage: upstreamUsageSchema.nullish(),
});

/** A whole (non-streamed) chat or completion answer, for upstreams that ignore `stream: true`. */
export const upstreamWholeAnswerSchema = z.looseObject({
  choices: z.array(z.looseObject({
    index: z.number().int().nonnegative().nullish(),
    message: z.looseObject({
      content: z.string().nullish(),
      refusal: z.string().nullish(),
      tool_calls: z.array(z.looseObject({
        id: z.string().nullish(),
        function: z.looseObject({ name: z.string().nullish(), arguments: z.union([z.string(), z.record(z.string(), z.unknown())]).nullish() }),
      })).nullish(),
    }).nullish(),
    text: z.string().nullish(),
    finish_reason: z.string().nullish(),
  })).nullish(),
  usage: z.looseObject({ prompt_tokens: z.number().int().nonnegative().nullish(), completion_tokens: z.number().int().nonnegative().nullish() }).nullish(),
});

/** An error answer's body: OpenAI's envelope, vLLM's flat form, Ollama's string, FastAPI's `detail`. */
export const upstreamErrorBodySchema = z.looseObject({
  error: z.union([upstreamErrorObject, z.string()]).nullish(),
  message: z.unknown().optional(),
  code: z.unknown().optional(),
  detail: z.unknown().optional(),
});
export type UpstreamErrorBody = z.infer<typeof upstreamErrorBodySchema>;
