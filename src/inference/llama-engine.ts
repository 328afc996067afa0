import type * as NodeLlamaCppModule from 'node-llama-cpp';
import type {
  ChatWrapper,
  Llama,
  LlamaContext,
  LlamaContextSequence,
  LlamaEmbeddingContext,
  LlamaGrammar,
  LlamaModel,
  Token,
} from 'node-llama-cpp';

type NodeLlamaCpp = typeof NodeLlamaCppModule;
import { AdmissionQueue, QueueFullError } from '../shared/admission-queue.ts';
import { ApiError } from '../shared/api-error.ts';
import { boundNumberExponents, toGrammarSchema, type GrammarSchema } from './grammar-schema.ts';
import type {
  ChatMessage,
  ChatOptions,
  EmbedResult,
  FinishReason,
  GenerateOptions,
  GenerateResult,
  LanguageModel,
  ModelDescriptor,
  ModelRegistry,
  ResponseFormat,
  ToolCall,
} from './language-model.ts';
import { chooseSequence } from './choose-sequence.ts';
import { DEFAULT_MAX_LOADED_MODELS } from './default-max-loaded-models.ts';
import { decodeSequencesTogether, sequenceIdOf } from './decode-sequences-together.ts';
import { l2Normalize } from './l2-normalize.ts';
import { toChatHistory } from './llama-chat-history.ts';
import { chatWrapperFor, planTools, ToolCallAssembler, type ToolPlan } from './llama-tools.ts';
import type { ModelCatalog } from './model-catalog.ts';

export type GpuChoice = 'auto' | 'cpu' | 'cuda' | 'vulkan' | 'metal';

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
  log: EngineLogger;
}

export interface EngineLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  debug(obj: object, msg: string): void;
}

const DEFAULT_CONTEXT_CAP = 4096;

/** What `loadModel` found when its load was done (see LlamaModelHost.preload). */
export type LoadOutcome =
  /** In memory; `cancelledUnload`: an unload that was waiting for requests will not happen. */
  | { state: 'loaded'; cancelledUnload: boolean }
  /** Loaded, but an unload asked for while it loaded has taken it out again. */
  | { state: 'unloaded-meanwhile' };

/**
 * Sampling when the client sends none: temperature 0.8 and top_p 0.95, as llama.cpp's server
 * and Ollama do, rather than OpenAI's 1.0/1.0, which suits small local models worse.
 * Applied here, not in the route, so upstreams keep their own defaults.
 */
export const DEFAULT_TEMPERATURE = 0.8;
export const DEFAULT_TOP_P = 0.95;

/**
 * Owns the llama.cpp binding and one host per model. The binding loads lazily on the first
 * request (never at start-up, so `svc serve` starts instantly and without a model).
 */
export class LlamaEngine implements ModelRegistry {
  readonly #options: LlamaEngineOptions;
  readonly #catalog: ModelCatalog;
  readonly #hosts = new Map<string, LlamaModelHost>();
  #llama: Promise<Llama> | undefined;

  constructor(catalog: ModelCatalog, options: LlamaEngineOptions) {
    this.#catalog = catalog;
    this.#options = options;
  }

  list(): ModelDescriptor[] {
    return this.#catalog.list();
  }

  /** The model with this id, or undefined when no such model is configured. */
  model(id: string): LanguageModel | undefined {
    const existing = this.#hosts.get(id);
    if (existing !== undefined) return existing;
    const descriptor = this.#catalog.get(id);
    if (descriptor === undefined) return undefined;
    const host = new LlamaModelHost(id, descriptor.path, () => this.#binding(), this.#options, (h) => this.#makeRoom(h));
    this.#hosts.set(id, host);
    return host;
  }

  /**
   * Imports node-llama-cpp and loads the llama.cpp binding now, in the background, so the
   * first request does not pay for it (module evaluation is synchronous JavaScript work).
   */
  warmUp(): Promise<void> {
    return this.#binding().then(
      () => undefined,
      (error: unknown) => this.#options.log.warn({ err: error }, 'llama.cpp binding failed to load; inference requests will fail'),
    );
  }

  /** Whether `id` is one of this engine's GGUF models (upstream and built-in models are not). */
  holds(id: string): boolean {
    return this.#hosts.has(id) || this.#catalog.get(id) !== undefined;
  }

  /**
   * Loads a model now, as its first request would, then keeps it for the keep-alive idle time
   * (`POST /api/models/load`). Undefined `id`s are the caller's 404: check `holds` first.
   */
  async loadModel(id: string): Promise<LoadOutcome> {
    const host = this.model(id) as LlamaModelHost | undefined;
    // A programming error, not a client's: the route answers 404 for ids `holds` does not know.
    if (host === undefined) throw new RangeError(`loadModel: '${id}' is not one of this engine's models`);
    return host.preload();
  }

  /**
   * Called synchronously as `host` starts loading, so that concurrent loads count each other:
   * with `maxLoadedModels` already in memory (or loading), the least recently used idle ones
   * are unloaded to make room (the returned promise: their memory is freed), and when too few
   * are idle the load is refused with 503 `model_capacity_reached` rather than exhausting memory.
   */
  #makeRoom(host: LlamaModelHost): Promise<void> {
    const max = this.#options.maxLoadedModels ?? DEFAULT_MAX_LOADED_MODELS;
    const resident = [...this.#hosts.values()].filter((h) => h !== host && h.resident);
    const excess = resident.length + 1 - max;
    if (excess <= 0) return Promise.resolve();
    const idle = resident.filter((h) => h.idle).sort((a, b) => a.lastUsed - b.lastUsed);
    if (idle.length < excess) {
      throw ApiError.busy(
        `Model '${host.id}' cannot be loaded now: ${resident.length} models are in memory (--max-loaded-models ${max}) and all of them are serving requests. Retry when one is idle, or unload one (POST /api/models/unload).`,
        5, 503, 'model_capacity_reached',
      );
    }
    const evicted = idle.slice(0, excess);
    this.#options.log.info({ model: host.id, unloading: evicted.map((h) => h.id), maxLoadedModels: max }, 'unloading idle models to make room');
    return Promise.all(evicted.map((h) => h.unload())).then(() => undefined);
  }

  /**
   * Unloads a model (`POST /api/models/unload`): at once when no request is running on it,
   * else when the last running one ends (`pending`), so no generation loses its context.
   */
  async unloadModel(id: string): Promise<'unloaded' | 'pending'> {
    const host = this.#hosts.get(id);
    return host === undefined ? 'unloaded' : host.unloadWhenIdle();
  }

  /** Ids of models currently resident in memory. */
  loadedModels(): string[] {
    return [...this.#hosts.values()].filter((h) => h.loaded).map((h) => h.id);
  }

  /** Active and waiting requests across all models (for health and shutdown). */
  load(): { active: number; waiting: number } {
    let active = 0;
    let waiting = 0;
    for (const h of this.#hosts.values()) {
      active += h.active;
      waiting += h.waiting;
    }
    return { active, waiting };
  }

  #binding(): Promise<Llama> {
    // node-llama-cpp takes ~0.7 s to import; a daemon without models, `svc --help` and every
    // other command should not pay for it, so it loads with the first inference request.
    this.#llama ??= import('node-llama-cpp').then(({ getLlama, LlamaLogLevel }) => getLlama({
      gpu: this.#options.gpu === 'cpu' ? false : this.#options.gpu,
      // Never compile or download at run time: the prebuilt binary ships in the npm package.
      build: 'never',
      progressLogs: false,
      logLevel: LlamaLogLevel.warn,
      logger: (level, message) => {
        const text = message.trim();
        if (text !== '') this.#options.log.debug({ llamaLevel: level }, `llama.cpp: ${text}`);
      },
      ...(this.#options.threads !== undefined ? { maxThreads: this.#options.threads } : {}),
    })).catch((error: unknown) => {
      this.#llama = undefined;
      throw error;
    });
    return this.#llama;
  }

  async close(): Promise<void> {
    await Promise.all([...this.#hosts.values()].map((h) => h.unload()));
    if (this.#llama !== undefined) {
      const llama = await this.#llama.catch(() => undefined);
      await llama?.dispose();
      this.#llama = undefined;
    }
  }
}

interface Loaded {
  /** The node-llama-cpp module, imported on first use. */
  lib: NodeLlamaCpp;
  model: LlamaModel;
  /**
   * The chat template, resolved once per load: resolving it renders the GGUF's Jinja template
   * against every built-in wrapper (100+ ms, synchronous), which LlamaChat would otherwise
   * repeat on every request, on the event loop.
   */
  chatWrapper: ChatWrapper;
  context: LlamaContext;
  embedding?: Promise<LlamaEmbeddingContext>;
  /** An upper bound on the bytes of text one token stands for (see maxBytesPerToken). */
  maxBytesPerToken: number;
  /** Compiled JSON-schema grammars by schema text, least recently used first (see #grammar). */
  grammars: Map<string, LlamaGrammar>;
}

/**
 * An upper bound on how many bytes of input text one token of this vocabulary covers, so that
 * `bytes / maxBytesPerToken` is a lower bound on a text's token count, known without tokenizing.
 * A piece's own UTF-8 length bounds what it covers for SentencePiece (`▁` is 3 bytes for a
 * 1-byte space, `<0x41>` 6 for 1) and byte-level BPE (every byte is written as a 1–2 byte
 * character); other tokenizers (WordPiece lowercases and strips accents, so a 1-byte `e` can
 * stand for a 3-byte character) get a factor of 4.
 */
export function maxBytesPerToken(pieces: readonly string[], tokenizerModel: string | undefined): number {
  // Without the vocabulary in the metadata nothing is known: no bound, count tokens instead.
  if (pieces.length === 0) return Number.POSITIVE_INFINITY;
  let longest = 4;
  for (const piece of pieces) longest = Math.max(longest, Buffer.byteLength(piece, 'utf8'));
  return tokenizerModel === 'llama' || tokenizerModel === 'gpt2' ? longest : 4 * longest;
}

/** Text above this many bytes is counted in slices, yielding to the event loop between them. */
const SLICE_BYTES = 16 * 1024;

const yieldToEventLoop = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * Counts tokens of texts without holding the event loop: each text is tokenized in slices of
 * about SLICE_BYTES (cut before whitespace, where tokenizers split words anyway), with other
 * requests served between slices, and counting stops as soon as `limit` is passed. Slice
 * boundaries can shift the count by a token or so each, so the result is an estimate: callers
 * use it to refuse texts far beyond the context, and count exactly what fits.
 */
export async function estimateTokens(texts: readonly string[], tokenize: (text: string) => number, limit: number, signal?: AbortSignal): Promise<number> {
  let count = 0;
  for (const text of texts) {
    for (let at = 0; at < text.length && count <= limit;) {
      let end = Math.min(text.length, at + SLICE_BYTES);
      if (end < text.length) {
        // Look back for a space within the slice's second half only, so a text without
        // spaces costs no more than one with them.
        let space = end;
        while (space > at + SLICE_BYTES / 2 && text.charCodeAt(space) !== 0x20) space--;
        if (space > at + SLICE_BYTES / 2) end = space;
        // Never split a surrogate pair.
        const code = text.charCodeAt(end - 1);
        if (code >= 0xd800 && code <= 0xdbff) end--;
      }
      count += tokenize(text.slice(at, end));
      at = end;
      if (at < text.length) {
        await yieldToEventLoop();
        // A client that went away while its prompt was being counted: stop counting for it.
        signal?.throwIfAborted();
      }
    }
    if (count > limit) break;
  }
  return count;
}

function contextLengthExceeded(param: string, message: string): ApiError {
  return new ApiError({ status: 400, type: 'invalid_request_error', code: 'context_length_exceeded', param, message });
}

/** Compiled grammars kept per loaded model. */
const GRAMMAR_CACHE_SIZE = 64;

/** `json_object`: any object, with node-llama-cpp's JSON grammar (and its end-of-JSON stop). */
const ANY_OBJECT: GrammarSchema = { type: 'object', additionalProperties: true };

/**
 * The grammar schema a reply must follow, or none. A forced tool call makes the reply a call,
 * so the format has nothing to shape; with `auto` node-llama-cpp cannot constrain a reply to
 * a grammar and detect calls at once, so the two are refused together rather than one ignored.
 */
function responseFormatSchema(format: ResponseFormat | undefined, plan: ToolPlan): GrammarSchema | undefined {
  if (format === undefined || format.type === 'text' || plan.force) return undefined;
  if (plan.callable !== undefined) {
    throw ApiError.unsupported('response_format', "response_format cannot be combined with tools under tool_choice 'auto' on the embedded engine: its grammar-constrained decoding can follow a JSON schema or detect tool calls, not both. Send tool_choice 'none', 'required' or a named function, or leave out one of the two.");
  }
  return format.type === 'json_object' ? ANY_OBJECT : toGrammarSchema(format.schema, 'response_format.json_schema.schema');
}

/** The client-supplied text a chat prompt is made of, for the size check before tokenizing. */
function promptTexts(messages: readonly ChatMessage[], options: ChatOptions): string[] {
  const texts: string[] = [];
  for (const m of messages) {
    texts.push(m.content);
    for (const call of m.toolCalls ?? []) texts.push(call.name, call.arguments);
  }
  for (const tool of options.tools ?? []) texts.push(tool.name, tool.description ?? '', JSON.stringify(tool.parameters ?? {}));
  return texts;
}

/** The generation options chat and completion share in node-llama-cpp. */
interface EngineSampling {
  maxTokens: number;
  temperature?: number;
  topP?: number;
  topK?: number;
  minP?: number;
  seed?: number;
  customStopTriggers?: readonly string[];
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
function unavailableSampler(options: GenerateOptions): ApiError | undefined {
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

function finishReasonOf(stopReason: string): FinishReason {
  if (stopReason === 'maxTokens') return 'length';
  if (stopReason === 'functionCalls') return 'tool_calls';
  if (stopReason === 'abort') return 'abort';
  return 'stop';
}

/**
 * One GGUF model: loads on first use, serves up to `parallel` generations as parallel
 * sequences of one llama.cpp context (llama.cpp batches them into shared decode steps),
 * queues up to `queueSize` more, and unloads after `keepAliveMs` idle.
 */
export class LlamaModelHost implements LanguageModel {
  readonly id: string;
  readonly #path: string;
  readonly #binding: () => Promise<Llama>;
  readonly #options: LlamaEngineOptions;
  readonly #makeRoom: (host: LlamaModelHost) => Promise<void>;
  readonly #admission: AdmissionQueue;
  readonly #embedAdmission: AdmissionQueue;
  #state: Promise<Loaded> | undefined;
  #loaded = false;
  #active = 0;
  #idleTimer: NodeJS.Timeout | undefined;
  #unloading: Promise<void> | undefined;
  /** An unload was asked for while requests ran or waited: done when none is left. */
  #unloadWhenIdle = false;
  /** Unloads asked for so far: a load that sees this change while it ran was overtaken by one. */
  #unloadsAsked = 0;
  /** When a request (or load) last entered, for choosing which idle model makes room. */
  #lastUsed = 0;
  /** Kept across unloads: resolving it is synchronous work worth doing once per file. */
  #chatWrapper: ChatWrapper | undefined;
  readonly #freeSequences: LlamaContextSequence[] = [];
  /** What each pooled sequence was last asked (the request's texts), to choose one for reuse. */
  readonly #sequencePrompts = new WeakMap<LlamaContextSequence, string>();

  constructor(id: string, path: string, binding: () => Promise<Llama>, options: LlamaEngineOptions, makeRoom: (host: LlamaModelHost) => Promise<void> = () => Promise.resolve()) {
    this.id = id;
    this.#path = path;
    this.#binding = binding;
    this.#options = options;
    this.#makeRoom = makeRoom;
    this.#admission = new AdmissionQueue(options.parallel, options.queueSize);
    this.#embedAdmission = new AdmissionQueue(1, options.queueSize);
  }

  get loaded(): boolean {
    return this.#loaded;
  }

  get active(): number {
    return this.#active;
  }

  /** In memory or on its way there: what counts against `maxLoadedModels`. */
  get resident(): boolean {
    return this.#state !== undefined;
  }

  /** Resident with no request running or waiting: may be unloaded to make room. */
  get idle(): boolean {
    return this.#state !== undefined && this.#active === 0 && this.waiting === 0;
  }

  get lastUsed(): number {
    return this.#lastUsed;
  }

  get waiting(): number {
    return this.#admission.waiting + this.#embedAdmission.waiting;
  }

  async chat(messages: readonly ChatMessage[], options: ChatOptions): Promise<GenerateResult> {
    // Everything the client may have got wrong is checked before the request waits for a
    // sequence: tool and response schemas the grammar cannot enforce, unanswered tool calls.
    const plan = planTools(options);
    const format = responseFormatSchema(options.responseFormat, plan);
    const history = toChatHistory(messages);
    return this.#generate(options, 'messages', promptTexts(messages, options), (loaded, sequence) => {
      const chatWrapper = chatWrapperFor(loaded.chatWrapper, plan, loaded.lib);
      const chat = new loaded.lib.LlamaChat({ contextSequence: sequence, chatWrapper, autoDisposeSequence: false });
      const calls = new ToolCallAssembler(options.onPart);
      return {
        promptTokens: () => chatWrapper
          .generateContextState({ chatHistory: history, ...(plan.documented !== undefined ? { availableFunctions: plan.documented } : {}) })
          .contextText.tokenize(loaded.model.tokenizer).length,
        run: async (sampling) => {
          const grammar = format === undefined ? undefined : await this.#grammar(loaded, format);
          // node-llama-cpp takes either a grammar or functions (responseFormatSchema never asks for both).
          const result = plan.callable === undefined
            ? await chat.generateResponse(history, { ...sampling, ...(grammar !== undefined ? { grammar } : {}) })
            : await chat.generateResponse(history, {
                ...sampling,
                functions: plan.callable,
                ...(plan.maxParallelFunctionCalls !== undefined ? { maxParallelFunctionCalls: plan.maxParallelFunctionCalls } : {}),
                onFunctionCallParamsChunk: (chunk) => calls.chunk(chunk),
                onFunctionCall: (call) => calls.called(call.functionName, call.params),
              });
          return { text: result.response, stopReason: result.metadata.stopReason };
        },
        toolCalls: () => calls.calls(),
        dispose: () => chat.dispose({ disposeSequence: false }),
      };
    });
  }

  /**
   * The compiled grammar for a JSON schema, cached per loaded model: node-llama-cpp compiles
   * the schema to GBNF in JavaScript and llama.cpp parses that on the event loop, work a client
   * repeating the same schema (every structured-output loop does) need not pay twice.
   */
  async #grammar(loaded: Loaded, schema: GrammarSchema): Promise<LlamaGrammar> {
    const key = JSON.stringify(schema);
    const cached = loaded.grammars.get(key);
    if (cached !== undefined) {
      // Least recently used goes first: re-inserting moves this one to the end.
      loaded.grammars.delete(key);
      loaded.grammars.set(key, cached);
      return cached;
    }
    let grammar: LlamaGrammar;
    try {
      const compiled = await loaded.model.llama.createGrammarForJsonSchema<GrammarSchema>(schema);
      const bounded = boundNumberExponents(compiled.grammar);
      // The same grammar with finite numbers only (grammar-schema.ts says why), and the stop
      // trigger and whitespace trimming LlamaJsonSchemaGrammar sets.
      grammar = bounded === compiled.grammar
        ? compiled
        : await loaded.model.llama.createGrammar({ grammar: bounded, stopGenerationTriggers: [loaded.lib.LlamaText(['\n'.repeat(4)])], trimWhitespaceSuffix: true });
    } catch (error) {
      throw new ApiError({
        status: 400, type: 'invalid_request_error', code: 'unsupported_schema', param: 'response_format.json_schema.schema',
        message: 'The schema could not be compiled into a grammar.', cause: error,
      });
    }
    loaded.grammars.set(key, grammar);
    if (loaded.grammars.size > GRAMMAR_CACHE_SIZE) loaded.grammars.delete(loaded.grammars.keys().next().value!);
    return grammar;
  }

  complete(prompt: string, options: GenerateOptions): Promise<GenerateResult> {
    return this.#generate(options, 'prompt', [prompt], (loaded, sequence) => {
      const completion = new loaded.lib.LlamaCompletion({ contextSequence: sequence, autoDisposeSequence: false });
      const bos = loaded.model.tokens.bos !== null && loaded.model.tokens.shouldPrependBosToken ? 1 : 0;
      return {
        promptTokens: () => loaded.model.tokenize(prompt).length + bos,
        run: async (sampling) => {
          const result = await completion.generateCompletionWithMeta(prompt, sampling);
          return { text: result.response, stopReason: result.metadata.stopReason };
        },
        dispose: () => completion.dispose({ disposeSequence: false }),
      };
    });
  }

  /**
   * The part chat and plain completion share: a sequence, the token budget, sampling options,
   * token counting and streaming callbacks around one generator call. `texts` are the prompt's
   * user-supplied parts, checked against the context before anything is tokenized whole.
   */
  #generate(
    options: GenerateOptions,
    promptParam: string,
    texts: readonly string[],
    prepare: (loaded: Loaded, sequence: LlamaContextSequence) => {
      /** Tokenizes the whole prompt (synchronous; only called once the prompt is known to be near the context's size). */
      promptTokens: () => number;
      run: (sampling: EngineSampling) => Promise<{ text: string; stopReason: string }>;
      /** The tool calls made so far (chat with tools). */
      toolCalls?: () => ToolCall[];
      dispose: () => void;
    },
  ): Promise<GenerateResult> {
    // Refused before the request waits for a sequence or loads the model.
    const unavailable = unavailableSampler(options);
    if (unavailable !== undefined) return Promise.reject(unavailable);
    return this.#withSequence(options.signal, texts.join('\u0000'), async (loaded, sequence) => {
      options.onStarted?.();
      if (options.maxTokens !== undefined && options.maxTokens > sequence.contextSize) {
        throw new ApiError({
          status: 400, type: 'invalid_request_error', code: 'invalid_value', param: 'max_tokens',
          message: `max_tokens is ${options.maxTokens}; this model's context holds ${sequence.contextSize} tokens per request, prompt included.`,
        });
      }
      try {
        await this.#refuseOversizedText(loaded, texts, sequence.contextSize, promptParam, 'The prompt', options.signal);
      } catch (error) {
        // Stopped while the prompt was being counted: nothing was generated, the sequence is intact.
        if (options.signal?.aborted === true) return { text: '', toolCalls: [], finishReason: 'abort', usage: { promptTokens: 0, completionTokens: 0 } };
        throw error;
      }
      const generator = prepare(loaded, sequence);
      try {
        const promptTokens = generator.promptTokens();
        const cap = options.onPromptTokens?.(promptTokens);
        const requested = cap === undefined ? options.maxTokens : Math.min(cap, options.maxTokens ?? this.#options.defaultMaxTokens);
        const maxTokens = this.#budget(promptTokens, sequence.contextSize, requested, promptParam);
        // Every token the model sampled, read from the sequence's own meter: counting the
        // tokens handed to onToken misses those held back while a stop sequence might match.
        const meterAtStart = sequence.tokenMeter.usedOutputTokens;
        let partial = '';
        const usage = () => ({ promptTokens, completionTokens: sequence.tokenMeter.usedOutputTokens - meterAtStart });
        try {
          const result = await generator.run({
            ...this.#sampling(options, maxTokens),
            onTextChunk: (text) => {
              partial += text;
              options.onPart?.({ type: 'text-delta', text });
            },
          });
          return { text: result.text, toolCalls: generator.toolCalls?.() ?? [], finishReason: finishReasonOf(result.stopReason), usage: usage() };
        } catch (error) {
          // node-llama-cpp throws the abort reason when the signal fires before the first
          // token; either way an aborted generation is a result, not a failure.
          if (options.signal?.aborted === true) return { text: partial, toolCalls: generator.toolCalls?.() ?? [], finishReason: 'abort', usage: usage() };
          throw error;
        }
      } finally {
        generator.dispose();
      }
    });
  }

  embed(inputs: readonly (string | readonly number[])[], signal?: AbortSignal): Promise<EmbedResult> {
    return this.#withModel(this.#embedAdmission, signal, async (loaded) => {
      loaded.embedding ??= loaded.model.createEmbeddingContext({
        contextSize: this.#contextSize(loaded.model),
        ...(this.#options.threads !== undefined ? { threads: this.#options.threads } : {}),
      });
      const context = await loaded.embedding;
      const limit = Math.min(context.model.trainContextSize, this.#contextSize(loaded.model));
      const vectors: number[][] = [];
      let promptTokens = 0;
      for (const [index, input] of inputs.entries()) {
        signal?.throwIfAborted();
        if (typeof input === 'string') await this.#refuseOversizedText(loaded, [input], limit, 'input', `input[${index}]`, signal);
        const tokens = typeof input === 'string' ? loaded.model.tokenize(input) : this.#checkTokens(loaded.model, input, index);
        if (tokens.length === 0) throw ApiError.invalidRequest(`input[${index}] is empty.`, 'input');
        if (tokens.length > limit) {
          throw contextLengthExceeded('input', `input[${index}] has ${tokens.length} tokens; this model embeds at most ${limit}.`);
        }
        promptTokens += tokens.length;
        const embedding = await context.getEmbeddingFor(tokens);
        // llama.cpp returns the pooled vector as is (norm ≈ 8 on the fixture); clients expect unit length.
        vectors.push(l2Normalize(embedding.vector));
      }
      return { vectors, promptTokens };
    });
  }

  #checkTokens(model: LlamaModel, input: readonly number[], index: number): Token[] {
    const vocabulary = model.fileInfo.metadata.tokenizer?.ggml?.tokens?.length ?? Number.POSITIVE_INFINITY;
    const bad = input.find((t) => t >= vocabulary);
    if (bad !== undefined) throw ApiError.invalidRequest(`input[${index}] holds token id ${bad}, outside this model's vocabulary of ${vocabulary}.`, 'input');
    return input as Token[];
  }

  #sampling(options: GenerateOptions, maxTokens: number): Omit<EngineSampling, 'onTextChunk'> {
    return {
      maxTokens,
      temperature: options.temperature ?? DEFAULT_TEMPERATURE,
      topP: options.topP ?? DEFAULT_TOP_P,
      ...(options.topK !== undefined ? { topK: options.topK } : {}),
      ...(options.minP !== undefined ? { minP: options.minP } : {}),
      ...(options.seed !== undefined ? { seed: options.seed } : {}),
      ...(options.stop !== undefined && options.stop.length > 0 ? { customStopTriggers: options.stop } : {}),
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

  /**
   * Refuses text that cannot fit `limit` tokens, cheaply and without holding the event loop:
   * first by its size in bytes (a lower bound on its tokens, no tokenizing at all), then by
   * counting tokens in slices. What passes is at most about `limit` tokens, so tokenizing it
   * whole afterwards is bounded work whatever a client sends.
   */
  async #refuseOversizedText(loaded: Loaded, texts: readonly string[], limit: number, param: string, what: string, signal: AbortSignal | undefined): Promise<void> {
    let bytes = 0;
    for (const text of texts) bytes += Buffer.byteLength(text, 'utf8');
    const atLeast = Math.ceil(bytes / loaded.maxBytesPerToken);
    if (atLeast > limit) {
      throw contextLengthExceeded(param, `${what} is ${bytes} bytes, at least ${atLeast} tokens; this model's context holds ${limit} per request.`);
    }
    if (bytes <= SLICE_BYTES) return;
    // Slice counts can run a token or two per slice above the exact count; leave that much room.
    const slack = Math.ceil(bytes / SLICE_BYTES) * 2;
    const estimate = await estimateTokens(texts, (text) => loaded.model.tokenize(text).length, limit + slack, signal);
    if (estimate > limit + slack) {
      throw contextLengthExceeded(param, `${what} is ${bytes} bytes, more than ${limit + slack} tokens; this model's context holds ${limit} per request.`);
    }
  }

  /** Tokens left for the reply; a prompt that does not fit is the client's error (400), as with OpenAI. */
  #budget(promptTokens: number, contextSize: number, requested: number | undefined, param: string): number {
    const room = contextSize - promptTokens;
    if (room < 1) {
      throw contextLengthExceeded(param, `The prompt is ${promptTokens} tokens; this model's context holds ${contextSize} per request.`);
    }
    return Math.min(requested ?? this.#options.defaultMaxTokens, room);
  }

  async #admit(queue: AdmissionQueue, signal: AbortSignal | undefined): Promise<() => void> {
    try {
      return await queue.acquire(signal);
    } catch (error) {
      if (error instanceof QueueFullError) {
        throw ApiError.busy(
          `Model '${this.id}' is busy: ${queue.capacity} requests are running and ${queue.maxWaiting} are waiting. Retry shortly.`,
          1, 503, 'model_overloaded',
        );
      }
      throw error;
    }
  }

  /** Admission, the idle timer and the model load around one unit of work. */
  async #withModel<T>(queue: AdmissionQueue, signal: AbortSignal | undefined, run: (loaded: Loaded) => Promise<T>): Promise<T> {
    let release: () => void;
    try {
      release = await this.#admit(queue, signal);
    } catch (error) {
      // The last waiting request gave up (its client left): a pending unload need not wait for it.
      this.#unloadIfPendingAndIdle();
      throw error;
    }
    this.#enter();
    try {
      return await run(await this.#load());
    } finally {
      this.#leave();
      release();
    }
  }

  /** A generation on a pooled sequence of the model's context. */
  #withSequence<T>(signal: AbortSignal | undefined, prompt: string, run: (loaded: Loaded, sequence: LlamaContextSequence) => Promise<T>): Promise<T> {
    return this.#withModel(this.#admission, signal, async (loaded) => {
      // The free sequence holding the longest prefix of this prompt (LlamaChat reuses it
      // instead of evaluating it again), else the lowest id, so running sequences stay
      // consecutive and llama.cpp decodes them in one pass (see chooseSequence).
      const chosen = chooseSequence(this.#freeSequences, sequenceIdOf, (s) => this.#sequencePrompts.get(s), prompt);
      const sequence = chosen >= 0 ? this.#freeSequences.splice(chosen, 1)[0]! : loaded.context.getSequence();
      let healthy = false;
      try {
        const result = await run(loaded, sequence);
        healthy = true;
        this.#sequencePrompts.set(sequence, prompt);
        return result;
      } catch (error) {
        // Client errors thrown before generation leave the sequence intact.
        healthy = error instanceof ApiError;
        throw error;
      } finally {
        if (healthy && !sequence.disposed) this.#freeSequences.push(sequence);
        else if (!sequence.disposed) sequence.dispose();
      }
    });
  }

  /**
   * Loads the model with no request, then lets the idle timer run as after a request. A load
   * asked for after an unload that is still waiting for requests cancels that unload (and says
   * so); an unload asked for while this load ran wins, and the answer says the model is out.
   */
  async preload(): Promise<LoadOutcome> {
    const cancelledUnload = this.#unloadWhenIdle;
    if (cancelledUnload) {
      this.#unloadWhenIdle = false;
      this.#options.log.info({ model: this.id }, 'a load cancelled the pending unload');
    }
    const asked = this.#unloadsAsked;
    this.#enter();
    try {
      await this.#load();
    } finally {
      this.#leave();
    }
    return this.#unloadsAsked === asked ? { state: 'loaded', cancelledUnload } : { state: 'unloaded-meanwhile' };
  }

  /**
   * Unloads now when no request holds the model or waits for it; otherwise marks it, and it
   * unloads when the last one is done. Requests waiting for admission are served first (they
   * would only load it again), so under steady traffic the unload waits for a pause.
   */
  async unloadWhenIdle(): Promise<'unloaded' | 'pending'> {
    this.#unloadsAsked++;
    if (this.#active > 0 || this.waiting > 0) {
      this.#unloadWhenIdle = true;
      return 'pending';
    }
    if (this.#idleTimer !== undefined) clearTimeout(this.#idleTimer);
    this.#idleTimer = undefined;
    await this.unload();
    return 'unloaded';
  }

  #enter(): void {
    this.#active++;
    this.#lastUsed = performance.now();
    if (this.#idleTimer !== undefined) {
      clearTimeout(this.#idleTimer);
      this.#idleTimer = undefined;
    }
  }

  /** Carries out a pending unload once nothing runs or waits; true when it did. */
  #unloadIfPendingAndIdle(): boolean {
    if (!this.#unloadWhenIdle || this.#active > 0 || this.waiting > 0) return false;
    this.#unloadWhenIdle = false;
    this.unload().catch((error: unknown) => this.#options.log.warn({ model: this.id, err: error }, 'model unload failed'));
    return true;
  }

  #leave(): void {
    this.#active--;
    if (this.#active > 0) return;
    // A pending unload with requests still waiting: they are admitted next, and the last of them unloads.
    if (this.#unloadWhenIdle) {
      this.#unloadIfPendingAndIdle();
      return;
    }
    if (!Number.isFinite(this.#options.keepAliveMs)) return;
    this.#idleTimer = setTimeout(() => {
      this.#idleTimer = undefined;
      if (this.#active === 0) {
        this.unload().catch((error: unknown) => this.#options.log.warn({ model: this.id, err: error }, 'model unload failed'));
      }
    }, this.#options.keepAliveMs);
    this.#idleTimer.unref();
  }

  #contextSize(model: LlamaModel): number {
    return this.#options.contextSize ?? Math.min(model.trainContextSize, DEFAULT_CONTEXT_CAP);
  }

  #load(): Promise<Loaded> {
    if (this.#state !== undefined) return this.#state;
    // Synchronous up to here, so loads that start together count each other; it throws the
    // 503 when every model in memory is busy, and otherwise frees idle ones to make room.
    const room = this.#makeRoom(this);
    this.#state = (async () => {
      await room;
      await this.#unloading;
      const started = performance.now();
      const llama = await this.#binding();
      const model = await llama.loadModel({ modelPath: this.#path });
      try {
        const context = await model.createContext({
          sequences: this.#options.parallel,
          contextSize: this.#contextSize(model),
          ...(this.#options.threads !== undefined ? { threads: this.#options.threads } : {}),
        });
        if (!decodeSequencesTogether(context)) {
          this.#options.log.warn({ model: this.id }, 'node-llama-cpp internals changed: parallel requests may not share decode batches');
        }
        this.#loaded = true;
        this.#options.log.info(
          { model: this.id, ms: Math.round(performance.now() - started), parallel: this.#options.parallel, contextSize: context.contextSize },
          'model loaded',
        );
        const lib = await import('node-llama-cpp');
        this.#chatWrapper ??= lib.resolveChatWrapper(model);
        const tokenizer = model.fileInfo.metadata.tokenizer?.ggml;
        return {
          lib, model, context, chatWrapper: this.#chatWrapper, grammars: new Map(),
          maxBytesPerToken: maxBytesPerToken(tokenizer?.tokens ?? [], tokenizer?.model),
        };
      } catch (error) {
        await model.dispose();
        throw error;
      }
    })().catch((error: unknown) => {
      this.#state = undefined;
      throw new ApiError({
        status: 500, type: 'server_error', code: 'model_load_failed',
        message: `Model '${this.id}' could not be loaded; see the daemon log.`, cause: error,
      });
    });
    return this.#state;
  }

  /**
   * Frees the model's memory. Safe at any time: a load that starts meanwhile waits for the
   * disposal to finish, so two copies of a model are never resident.
   */
  unload(): Promise<void> {
    const state = this.#state;
    if (state === undefined) return this.#unloading ?? Promise.resolve();
    this.#state = undefined;
    this.#loaded = false;
    this.#freeSequences.length = 0;
    const unloading = (async () => {
      const loaded = await state.catch(() => undefined);
      if (loaded === undefined) return;
      const embedding = await loaded.embedding?.catch(() => undefined);
      await embedding?.dispose();
      await loaded.context.dispose();
      await loaded.model.dispose();
      this.#options.log.info({ model: this.id }, 'model unloaded');
    })().finally(() => {
      if (this.#unloading === unloading) this.#unloading = undefined;
    });
    this.#unloading = unloading;
    return unloading;
  }
}
