/**
 * How the embedded llama.cpp engine is configured (`svc serve` and `svc hosted` flags). Its own
 * file so that the engine's parts (scheduler, residency, model host) and the CLI's config parsing
 * share these types without importing each other.
 */
export type GpuChoice = 'auto' | 'cpu' | 'cuda' | 'vulkan' | 'metal';

/**
 * The getLlama options every use of llama.cpp in svc shares (the engine, and `svc doctor`, which
 * reports the backend the engine would get): the `--gpu` choice, and prebuilt binaries only,
 * never a compile or download at run time (the binary ships in the npm package).
 */
export function llamaBindingOptions(gpu: GpuChoice): { gpu: false | Exclude<GpuChoice, 'cpu'>; build: 'never'; progressLogs: false } {
  return { gpu: gpu === 'cpu' ? false : gpu, build: 'never', progressLogs: false };
}

/** `--speculative`: how the engine guesses tokens ahead for the model to check in one batch. */
export const SPECULATIVE_MODES = ['off', 'lookup', 'draft'] as const;
export type SpeculativeMode = (typeof SPECULATIVE_MODES)[number];

/**
 * Speculative decoding (speculative-decoding.ts, docs/runtime.md): off; `lookup`, guesses from
 * n-grams of the prompt; `draft`, guesses from a smaller model of the same vocabulary, loaded
 * beside each model and unloaded with it.
 */
export type SpeculativeSettings = { mode: 'off' } | { mode: 'lookup' } | { mode: 'draft'; draftModelPath: string };

export interface LlamaEngineOptions {
  /** Parallel sequences per model (continuous batching width). */
  parallel: number;
  /** Requests allowed to wait for a free sequence before new ones get 503. */
  queueSize: number;
  /** Context size per sequence; default: the model's training context, capped at 4096. */
  contextSize?: number | undefined;
  /** Reply tokens when a request sets no max_tokens (still bounded by what is left of the context). */
  defaultMaxTokens: number;
  /** Idle time before a model is unloaded; 0 unloads after each request, Infinity never. */
  keepAliveMs: number;
  /**
   * Most models in memory (loaded or loading) at once; default DEFAULT_MAX_LOADED_MODELS. Loading
   * one more unloads the least recently used idle model, or is refused (503) when all are busy.
   */
  maxLoadedModels?: number | undefined;
  gpu: GpuChoice;
  threads?: number | undefined;
  /** Default: off. */
  speculative?: SpeculativeSettings | undefined;
  log: EngineLogger;
}

export interface EngineLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  debug(obj: object, msg: string): void;
}
