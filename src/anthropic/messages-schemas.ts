import { z } from 'zod';

/**
 * Request schemas of Anthropic's Messages API as svc serves it (`POST /v1/messages`,
 * `/v1/messages/count_tokens`). Top-level objects are strict, as on the OpenAI routes and as
 * Anthropic answers ("Extra inputs are not permitted"): an unknown field is a 400 naming it.
 * Content blocks are loose: a block type svc does not take (image, document, server-tool
 * results) is recognised in messages-request.ts and refused there with a message that says so.
 */

/** Prompt caching is a hint to Anthropic's servers; svc accepts it on every block and ignores it. */
const cacheControl = z.looseObject({ type: z.string() }).nullish();

export const textBlockSchema = z.looseObject({
  type: z.literal('text'),
  text: z.string(),
  cache_control: cacheControl,
});

/** Any content block, by its `type`; the known ones are checked further by their own schemas. */
const anyBlock = z.looseObject({ type: z.string().min(1) });

const messageContent = z.union([z.string(), z.array(anyBlock).min(1, 'a message has at least one content block')]);

export const messageParamSchema = z.looseObject({
  role: z.enum(['user', 'assistant']),
  content: messageContent,
});

export const toolUseBlockSchema = z.looseObject({
  type: z.literal('tool_use'),
  id: z.string().min(1),
  name: z.string().min(1),
  input: z.record(z.string(), z.unknown()),
  cache_control: cacheControl,
});

export const toolResultBlockSchema = z.looseObject({
  type: z.literal('tool_result'),
  tool_use_id: z.string().min(1),
  content: z.union([z.string(), z.array(anyBlock)]).nullish(),
  is_error: z.boolean().nullish(),
  cache_control: cacheControl,
});

/** Anthropic's rule for tool names; every chat template renders such a name safely. */
const toolName = z.string().regex(/^[a-zA-Z0-9_-]{1,64}$/, 'tool names are 1 to 64 letters, digits, underscores or dashes');

/**
 * A client tool. Anthropic's server tools (web search, code execution, bash, text editor,
 * computer use…) carry a versioned `type` and no `input_schema`; messages-request.ts refuses them.
 */
export const toolSchema = z.looseObject({
  type: z.string().nullish(),
  name: z.string().min(1),
});

export const customToolSchema = z.strictObject({
  type: z.literal('custom').nullish(),
  name: toolName,
  description: z.string().nullish(),
  input_schema: z.looseObject({ type: z.literal('object') }),
  strict: z.boolean().nullish(),
  cache_control: cacheControl,
  // Client-side hints of Anthropic's tool search and streaming; nothing a local model would do differently.
  defer_loading: z.boolean().nullish(),
  eager_input_streaming: z.boolean().nullish(),
  input_examples: z.array(z.unknown()).nullish(),
});

export const toolChoiceSchema = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('auto'), disable_parallel_tool_use: z.boolean().nullish() }),
  z.strictObject({ type: z.literal('any'), disable_parallel_tool_use: z.boolean().nullish() }),
  z.strictObject({ type: z.literal('tool'), name: z.string().min(1), disable_parallel_tool_use: z.boolean().nullish() }),
  z.strictObject({ type: z.literal('none') }),
]);

/**
 * Extended thinking: accepted so clients that send it (Claude Code does) work. svc's models
 * answer without separate thinking blocks; `enabled` and `adaptive` change nothing.
 */
const thinkingSchema = z.discriminatedUnion('type', [
  z.looseObject({ type: z.literal('enabled'), budget_tokens: z.number().int().min(0) }),
  z.looseObject({ type: z.literal('adaptive') }),
  z.looseObject({ type: z.literal('disabled') }),
]);

const systemSchema = z.union([z.string(), z.array(textBlockSchema)]);

/** What a create and a count_tokens request share: the prompt as the model will read it. */
const promptFields = {
  model: z.string().min(1),
  messages: z.array(messageParamSchema).min(1, 'messages must contain at least one message').max(100_000, 'at most 100,000 messages'),
  system: systemSchema.nullish(),
  tools: z.array(toolSchema).max(128, 'at most 128 tools').nullish(),
  tool_choice: toolChoiceSchema.nullish(),
  thinking: thinkingSchema.nullish(),
};

export const messagesRequestSchema = z.strictObject({
  ...promptFields,
  max_tokens: z.number().int().min(1),
  stop_sequences: z.array(z.string()).max(16, 'at most 16 stop sequences').nullish(),
  stream: z.boolean().nullish(),
  temperature: z.number().min(0).max(1).nullish(),
  top_p: z.number().min(0).max(1).nullish(),
  top_k: z.number().int().min(0).max(2 ** 31 - 1).nullish(),
  metadata: z.looseObject({ user_id: z.string().max(256).nullish() }).nullish(),
  // Accepted at the values every request may send; the route refuses what svc cannot honour.
  service_tier: z.enum(['auto', 'standard_only']).nullish(),
  container: z.unknown().optional(),
  mcp_servers: z.array(z.unknown()).nullish(),
});

export const countTokensRequestSchema = z.strictObject({
  ...promptFields,
  mcp_servers: z.array(z.unknown()).nullish(),
});

export type MessagesRequest = z.output<typeof messagesRequestSchema>;
export type CountTokensRequest = z.output<typeof countTokensRequestSchema>;
export type PromptRequest = Pick<MessagesRequest, keyof typeof promptFields | 'mcp_servers'>;
export type MessageParam = z.output<typeof messageParamSchema>;
