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
  capabilities?: readonly ('chat' | 'embeddings')[];
}

/** Where the HTTP layer finds models: the list it shows and the model behind an id. */
export interface ModelRegistry {
  list(): ModelDescriptor[];
  model(id: string): LanguageModel | undefined;
}
