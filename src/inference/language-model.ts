import type { ModelPlane } from './model-plane.ts';

/**
 * The engine-facing interface the HTTP layer talks to (after vercel/ai's provider split):
 * a model can generate chat or plain-text completions, whole or streamed as typed parts, and
 * embed text. llama.cpp implements it, and so do OpenAI-compatible upstreams: every provider
 * produces the same parts, and the HTTP layer has one place that turns parts into SSE chunks.
 */
export type ChatRole = 'system' | 'user' | 'assistant' | 'tool';

/** A function call the model made: `arguments` is JSON text, as OpenAI sends it. */
export interface ToolCall {
  id: string;
  name: string;
  arguments: string;
}

export interface ChatMessage {
  role: ChatRole;
  content: string;
  /** Calls an assistant turn made (the conversation continues with a `tool` message per call). */
  toolCalls?: readonly ToolCall[] | undefined;
  /** For `tool` messages: the call this message answers. */
  toolCallId?: string | undefined;
}

/** A function the model may call; `parameters` is a JSON Schema object. */
export interface ToolDefinition {
  name: string;
  description?: string | undefined;
  parameters?: Readonly<Record<string, unknown>> | undefined;
  strict?: boolean | undefined;
}

/**
 * Whether and which tool the model must call. Enforced, not advisory: `required` and `function`
 * always yield that call, `none` never yields one.
 */
export type ToolChoice =
  | { type: 'auto' }
  | { type: 'none' }
  | { type: 'required' }
  | { type: 'function'; name: string };

/** The shape of the reply: free text, any JSON object, or JSON matching a schema. */
export type ResponseFormat =
  | { type: 'text' }
  | { type: 'json_object' }
  | { type: 'json_schema'; name: string; schema: Readonly<Record<string, unknown>>; strict: boolean };

export interface SamplingOptions {
  /** Upper bound on generated tokens; undefined means "until the context is full". */
  maxTokens?: number | undefined;
  temperature?: number | undefined;
  topP?: number | undefined;
  seed?: number | undefined;
  stop?: readonly string[] | undefined;
  frequencyPenalty?: number | undefined;
  presencePenalty?: number | undefined;
  /** llama.cpp's and Ollama's sampling extensions; undefined leaves the engine's default. */
  topK?: number | undefined;
  minP?: number | undefined;
  /** Divides the logits of recently generated tokens (1 = off). */
  repeatPenalty?: number | undefined;
  /** How many recent generated tokens the penalties look at; 0 turns them off, -1 means all. */
  repeatLastN?: number | undefined;
  /**
   * Locally typical sampling (1 = off) and mirostat (0 = off, 1, 2, with tau and eta): passed to
   * upstreams; the llama.cpp engine has no sampler for them and refuses any other value.
   */
  typicalP?: number | undefined;
  mirostat?: number | undefined;
  mirostatTau?: number | undefined;
  mirostatEta?: number | undefined;
}

/**
 * What a generation streams, in order: text deltas, and for each tool call a start (id and
 * name) followed by deltas of its JSON arguments. Tool-call `index` counts calls from 0.
 */
export type GenerationPart =
  | { type: 'text-delta'; text: string }
  | { type: 'tool-call-start'; index: number; id: string; name: string }
  | { type: 'tool-call-delta'; index: number; argumentsDelta: string };

export interface GenerateOptions extends SamplingOptions {
  /** Aborting stops generation and frees the sequence; the result carries what was produced. */
  signal?: AbortSignal | undefined;
  /** Called with each part as it is produced (streaming). */
  onPart?: ((part: GenerationPart) => void) | undefined;
  /**
   * Called once when the engine starts on this request, after any wait for a free sequence or
   * for the model to load: what came before was not this request's work (hosted metering counts
   * load time from here). Engines without a queue of their own may not call it.
   */
  onStarted?: (() => void) | undefined;
  /**
   * Called with the engine's own count of the prompt as it will process it (after the chat
   * template, tool definitions included), before any of it is evaluated. It may return a cap on
   * completion tokens (below `maxTokens`), or throw to refuse the request: nothing has run, and
   * the call rejects with that error. Hosted metering checks its Joule ceiling here. Backends that
   * cannot count before the work (upstreams) never call it.
   */
  onPromptTokens?: ((promptTokens: number) => number | undefined) | undefined;
}

export interface ChatOptions extends GenerateOptions {
  tools?: readonly ToolDefinition[] | undefined;
  /** Default: `auto` when tools are given. */
  toolChoice?: ToolChoice | undefined;
  /** Whether the model may make several calls in one turn (default true, as OpenAI). */
  parallelToolCalls?: boolean | undefined;
  responseFormat?: ResponseFormat | undefined;
}

/** `abort`: the client left or the daemon is stopping; never sent to a client as such. */
export type FinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter' | 'abort';

export interface TokenUsage {
  promptTokens: number;
  completionTokens: number;
}

export interface GenerateResult {
  text: string;
  /** Calls the model made, in order (empty without tools). */
  toolCalls: ToolCall[];
  finishReason: FinishReason;
  /**
   * The stop sequence that ended the reply (finish `stop`), where the engine knows it: the
   * llama.cpp engine does; an OpenAI-compatible upstream does not say, so it is absent there.
   */
  stopSequence?: string | undefined;
  usage: TokenUsage;
}

export interface EmbedResult {
  vectors: number[][];
  promptTokens: number;
}

/** One score per document, in document order, each in [0, 1] (higher: more relevant). */
export interface RankResult {
  scores: number[];
  /** Tokens evaluated: the query and the document of each pair, with the model's separators. */
  promptTokens: number;
}

export interface LanguageModel {
  readonly id: string;
  /** `remote` for a model an upstream off this machine serves (model-plane.ts); absent means local. */
  readonly plane?: ModelPlane | undefined;
  chat(messages: readonly ChatMessage[], options: ChatOptions): Promise<GenerateResult>;
  complete(prompt: string, options: GenerateOptions): Promise<GenerateResult>;
  /** Each input is text, or token ids of this model's vocabulary (as OpenAI accepts). */
  embed(inputs: readonly (string | readonly number[])[], signal?: AbortSignal): Promise<EmbedResult>;
  /**
   * Scores each document's relevance to the query with a reranker's classification head (a
   * cross-encoder: query and document read together). Only GGUF models with the `rerank`
   * capability have it; undefined elsewhere (chat models, upstreams, the built-in embedder).
   */
  rank?(query: string, documents: readonly string[], signal?: AbortSignal): Promise<RankResult>;
}

/** What `/v1/models` lists. */
export interface ModelDescriptor {
  id: string;
  /** Unix seconds (the file's modification time for local GGUF files). */
  created: number;
  ownedBy: string;
  path?: string;
  sizeBytes?: number;
  /** Where the model was found: `flag`, `svc`, `ollama`, `huggingface`, `lmstudio`. */
  source?: string;
  /** From the GGUF header; null where the file does not say. */
  architecture?: string | null;
  parameterCount?: number | null;
  /** `8B` (the file's size label) or counted (`494.03M`). */
  parameterSize?: string | null;
  /** `Q4_K_M`, `F16`, … */
  quantization?: string | null;
  /** The context the model was trained with. */
  contextLength?: number | null;
  embeddingLength?: number | null;
  /** What the model is built for (model-capabilities.ts). */
  capabilities?: readonly ('chat' | 'embeddings' | 'rerank')[];
  /** `remote` for a model an upstream off this machine serves (model-plane.ts); absent means local. */
  plane?: ModelPlane | undefined;
}

/** Where the HTTP layer finds models: the list it shows and the model behind an id. */
export interface ModelRegistry {
  list(): ModelDescriptor[];
  model(id: string): LanguageModel | undefined;
}
