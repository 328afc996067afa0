/**
 * The engine-facing interface the HTTP layer talks to (after vercel/ai's provider split):
 * a model can generate chat or plain-text completions, whole or streamed, and embed text.
 * llama.cpp implements it today; OpenAI-compatible upstreams will implement the same shape.
 */
export type ChatRole = 'system' | 'user' | 'assistant';

export interface ChatMessage {
  role: ChatRole;
  content: string;
}

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
}

export interface GenerateOptions extends SamplingOptions {
  /** Aborting stops generation and frees the sequence; the result carries what was produced. */
  signal?: AbortSignal | undefined;
  /** Called with each piece of decoded text as it is produced (streaming). */
  onText?: ((text: string) => void) | undefined;
}

export type FinishReason = 'stop' | 'length' | 'abort';

export interface TokenUsage {
  promptTokens: number;
  completionTokens: number;
}

export interface GenerateResult {
  text: string;
  finishReason: FinishReason;
  usage: TokenUsage;
}

export interface EmbedResult {
  vectors: number[][];
  promptTokens: number;
}

export interface LanguageModel {
  readonly id: string;
  chat(messages: readonly ChatMessage[], options: GenerateOptions): Promise<GenerateResult>;
  complete(prompt: string, options: GenerateOptions): Promise<GenerateResult>;
  /** Each input is text, or token ids of this model's vocabulary (as OpenAI accepts). */
  embed(inputs: readonly (string | readonly number[])[], signal?: AbortSignal): Promise<EmbedResult>;
}

/** What `/v1/models` lists. */
export interface ModelDescriptor {
  id: string;
  /** Unix seconds (the file's modification time for local GGUF files). */
  created: number;
  ownedBy: string;
  path?: string;
  sizeBytes?: number;
}

/** Where the HTTP layer finds models: the list it shows and the model behind an id. */
export interface ModelRegistry {
  list(): ModelDescriptor[];
  model(id: string): LanguageModel | undefined;
}
