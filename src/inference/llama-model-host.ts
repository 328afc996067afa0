/**
 * One GGUF model as a LanguageModel: chat, plain completion and embeddings on its loaded
 * context, up to `parallel` generations at once as parallel sequences of one llama.cpp context
 * (llama.cpp batches them into shared decode steps). When it is in memory and who may use it
 * is its residency's (model-residency.ts); what a request may spend, the token budget's.
 */
import type { ChatWrapper, Llama, LlamaContextSequence, Token } from 'node-llama-cpp';
import { ApiError } from '../shared/api-error.ts';
import type {
  ChatMessage,
  ChatOptions,
  EmbedResult,
  GenerateOptions,
  GenerateResult,
  LanguageModel,
  RankResult,
  ToolCall,
} from './language-model.ts';
import { chooseSequence } from './choose-sequence.ts';
import { sequenceIdOf } from './decode-sequences-together.ts';
import { l2Normalize } from './l2-normalize.ts';
import { toChatHistory } from './llama-chat-history.ts';
import type { LlamaEngineOptions } from './llama-engine-options.ts';
import { engineSampling, finishReasonOf, unavailableSampler, type EngineSampling } from './llama-sampling.ts';
import { chatWrapperFor, planTools, ToolCallAssembler, type ToolPlan } from './llama-tools.ts';
import { contextSizeFor, disposeLoadedLlamaModel, loadedMemoryBytes, loadLlamaModel, type LoadedLlamaModel } from './loaded-llama-model.ts';
import { ModelResidency } from './model-residency.ts';
import { newSequence, wastedPredictions } from './speculative-decoding.ts';
import { completionPromptTokens, generatePlainCompletion } from './plain-completion.ts';
import { compiledGrammar, responseFormatGrammar } from './response-format-grammar.ts';
import { rankDocuments } from './rank-documents.ts';
import { StopSequenceMatcher } from './stop-sequence-matcher.ts';
import { anyObject, checkStructuredReply, schemaCheck, structuredOutputInvalid, type JsonCheck, type StructuredExpectation } from './structured-reply-check.ts';
import {
  contextLengthExceeded,
  promptTexts,
  refuseMaxTokensBeyondContext,
  refuseOversizedText,
  replyTokenBudget,
  type TokenCounter,
} from './token-budget.ts';

/** What chat and completion each bring to one generation (see #generate). */
interface Generator {
  /** Tokenizes the whole prompt (synchronous; only called once the prompt is known to be near the context's size). */
  promptTokens: () => number;
  run: (sampling: EngineSampling) => Promise<{ text: string; stopReason: string }>;
  /** The tool calls made so far (chat with tools). */
  toolCalls?: () => ToolCall[];
  /**
   * The reply is grammar-constrained JSON (response_format, a forced call): stop sequences do
   * not apply, as a value cut by one could not parse (docs/runtime.md, Stop sequences).
   */
  constrained?: boolean;
  dispose: () => void;
}

/**
 * What a chat reply must be when its output is structured: the response format's schema, or the
 * callable tools' parameter schemas (checked against the client's schemas, see
 * structured-reply-check.ts). Undefined for free text.
 */
function structuredExpectation(options: ChatOptions, plan: ToolPlan, format: string | undefined): StructuredExpectation | undefined {
  const response = options.responseFormat;
  const text: JsonCheck | undefined = format === undefined || response === undefined
    ? undefined
    : response.type === 'json_schema' ? schemaCheck(response.schema) : anyObject;
  if (plan.callable === undefined) return text === undefined ? undefined : { text };
  const tools = new Map<string, JsonCheck>();
  for (const tool of options.tools ?? []) {
    const callable = Object.hasOwn(plan.callable, tool.name) ? plan.callable[tool.name] : undefined;
    if (callable !== undefined) tools.set(tool.name, tool.parameters === undefined ? anyObject : schemaCheck(tool.parameters, callable.params));
  }
  return { ...(text !== undefined ? { text } : {}), tools, callForced: plan.force };
}

function tokenCounter(loaded: LoadedLlamaModel): TokenCounter {
  return { maxBytesPerToken: loaded.maxBytesPerToken, count: (text) => loaded.model.tokenize(text).length };
}

export class LlamaModelHost implements LanguageModel {
  readonly id: string;
  /** Load, unload, keep-alive and admission of this model: what the engine's scheduler sees. */
  readonly residency: ModelResidency<LoadedLlamaModel>;
  readonly #options: LlamaEngineOptions;
  /** Kept across unloads: resolving it is synchronous work worth doing once per file. */
  #chatWrapper: ChatWrapper | undefined;
  /** What each pooled sequence was last asked (the request's texts), to choose one for reuse. */
  readonly #sequencePrompts = new WeakMap<LlamaContextSequence, string>();
  /** What the current load holds (loadedMemoryBytes), read once it is done; undefined when not loaded. */
  #memoryBytes: number | undefined;

  constructor(
    id: string, path: string, binding: () => Promise<Llama>, options: LlamaEngineOptions,
    makeRoom: (residency: ModelResidency<LoadedLlamaModel>) => Promise<void> = () => Promise.resolve(),
  ) {
    this.id = id;
    this.#options = options;
    this.residency = new ModelResidency(id, options, {
      load: async () => {
        const loaded = await loadLlamaModel(id, path, binding, options, this.#chatWrapper);
        this.#chatWrapper = loaded.chatWrapper;
        this.#memoryBytes = loadedMemoryBytes(loaded);
        return loaded;
      },
      dispose: (loaded) => {
        this.#memoryBytes = undefined;
        return disposeLoadedLlamaModel(loaded);
      },
      makeRoom,
    });
  }

  /** Bytes in memory while loaded (`memory_bytes` in /v1/models); null when not loaded. */
  get memoryBytes(): number | null {
    return this.residency.loaded ? this.#memoryBytes ?? null : null;
  }

  async chat(messages: readonly ChatMessage[], options: ChatOptions): Promise<GenerateResult> {
    // Everything the client may have got wrong is checked before the request waits for a
    // sequence: tool and response schemas the grammar cannot enforce, unanswered tool calls.
    const plan = planTools(options);
    const format = responseFormatGrammar(options.responseFormat, plan);
    const history = toChatHistory(messages);
    const expected = structuredExpectation(options, plan, format);
    const reply = this.#generate(options, 'messages', promptTexts(messages, options), (loaded, sequence) => {
      const chatWrapper = chatWrapperFor(loaded.chatWrapper, plan, loaded.lib);
      const chat = new loaded.lib.LlamaChat({ contextSequence: sequence, chatWrapper, autoDisposeSequence: false });
      const calls = new ToolCallAssembler(options.onPart);
      return {
        promptTokens: () => chatWrapper
          .generateContextState({ chatHistory: history, ...(plan.documented !== undefined ? { availableFunctions: plan.documented } : {}) })
          .contextText.tokenize(loaded.model.tokenizer).length,
        run: async (sampling) => {
          const grammar = format === undefined ? undefined : await compiledGrammar(loaded, format);
          // node-llama-cpp takes either a grammar or functions (responseFormatGrammar never asks for both).
          const result = plan.callable === undefined
            ? await chat.generateResponse(history, { ...sampling, ...(grammar !== undefined ? { grammar } : {}) })
            : await chat.generateResponse(history, {
                ...sampling,
                functions: plan.callable,
                ...(plan.maxParallelFunctionCalls !== undefined ? { maxParallelFunctionCalls: plan.maxParallelFunctionCalls } : {}),
                onFunctionCallParamsChunk: (chunk) => calls.chunk(chunk),
                onFunctionCall: (call) => calls.called(call.functionName, call.params),
              }).catch((error: unknown) => {
                // node-llama-cpp's own params grammar lets an integer's exponent run to 16 digits
                // (`-7E9087` parses to -Infinity) and its check of the parsed call then throws:
                // complete JSON that breaks the schema, the documented 500, not an internal error.
                if (!(error instanceof loaded.lib.LlamaJsonSchemaValidationError)) throw error;
                const call = calls.calls().at(-1);
                throw structuredOutputInvalid(call === undefined ? 'tool call' : `call of ${JSON.stringify(call.name)}`, error.message, options);
              });
          return { text: result.response, stopReason: result.metadata.stopReason };
        },
        toolCalls: () => calls.calls(),
        constrained: format !== undefined || plan.force,
        dispose: () => chat.dispose({ disposeSequence: false }),
      };
    });
    return expected === undefined ? reply : reply.then((result) => checkStructuredReply(result, expected, options));
  }

  complete(prompt: string, options: GenerateOptions): Promise<GenerateResult> {
    return this.#generate(options, 'prompt', [prompt], (loaded, sequence) => {
      // svc's own token loop, not LlamaCompletion, which loses a reply's last characters at
      // max_tokens (plain-completion.ts).
      let tokens: Token[] | undefined;
      const promptTokens = (): Token[] => (tokens ??= completionPromptTokens(loaded.model, prompt));
      return {
        promptTokens: () => promptTokens().length,
        run: (sampling) => generatePlainCompletion(sequence, promptTokens(), sampling),
        dispose: () => {},
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
    prepare: (loaded: LoadedLlamaModel, sequence: LlamaContextSequence) => Generator,
  ): Promise<GenerateResult> {
    // Refused before the request waits for a sequence or loads the model.
    const unavailable = unavailableSampler(options);
    if (unavailable !== undefined) return Promise.reject(unavailable);
    return this.#withSequence(options.signal, texts.join('\u0000'), async (loaded, sequence) => {
      options.onStarted?.();
      refuseMaxTokensBeyondContext(options.maxTokens, sequence.contextSize);
      try {
        await refuseOversizedText(tokenCounter(loaded), texts, sequence.contextSize, promptParam, 'The prompt', options.signal);
      } catch (error) {
        // Stopped while the prompt was being counted: nothing was generated, the sequence is intact.
        if (options.signal?.aborted === true) return { text: '', toolCalls: [], finishReason: 'abort', usage: { promptTokens: 0, completionTokens: 0 } };
        throw error;
      }
      const generator = prepare(loaded, sequence);
      try {
        const promptTokens = generator.promptTokens();
        const maxTokens = replyTokenBudget({
          promptTokens, contextSize: sequence.contextSize, maxTokens: options.maxTokens,
          cap: options.onPromptTokens?.(promptTokens), defaultMaxTokens: this.#options.defaultMaxTokens, param: promptParam,
        });
        // Every token the model sampled, read from the sequence's own meter: counting the
        // tokens handed to onToken misses those held back while a stop sequence might match.
        // The meter also counts speculative guesses the model evaluated in vain: not the reply's.
        const meterAtStart = sequence.tokenMeter.usedOutputTokens - wastedPredictions(sequence);
        // At most maxTokens, as a safeguard: node-llama-cpp's LlamaCompletion sampled a token past
        // the limit (svc's own completion loop, plain-completion.ts, never does).
        const usage = () => ({
          promptTokens,
          completionTokens: Math.min(maxTokens, sequence.tokenMeter.usedOutputTokens - wastedPredictions(sequence) - meterAtStart),
        });
        const stops = generator.constrained === true || options.stop === undefined ? [] : options.stop.filter((s) => s !== '');
        const matcher = stops.length === 0 ? undefined : new StopSequenceMatcher(stops);
        // A stop sequence's match ends the generation the way a client's abort does.
        const matched = new AbortController();
        const signal = options.signal === undefined ? matched.signal : AbortSignal.any([options.signal, matched.signal]);
        let text = '';
        const release = (chunk: string): void => {
          if (matcher !== undefined && chunk === '') return;
          text += chunk;
          options.onPart?.({ type: 'text-delta', text: chunk });
        };
        const toolCalls = (): ToolCall[] => generator.toolCalls?.() ?? [];
        const ended = (fallbackText: string, stopReason: string): GenerateResult => {
          if (matcher?.stopped === true) return { text, toolCalls: toolCalls(), finishReason: 'stop', stopSequence: matcher.matched, usage: usage() };
          if (options.signal?.aborted === true) return { text, toolCalls: toolCalls(), finishReason: 'abort', usage: usage() };
          // Ended without a match (max_tokens, end of generation): what was held back is the reply's too.
          if (matcher !== undefined) release(matcher.flush());
          return { text: matcher === undefined ? fallbackText : text, toolCalls: toolCalls(), finishReason: finishReasonOf(stopReason), usage: usage() };
        };
        try {
          const result = await generator.run({
            ...engineSampling(options, maxTokens),
            signal,
            stopOnAbortSignal: true,
            onTextChunk: (chunk) => {
              if (matcher === undefined) return release(chunk);
              release(matcher.push(chunk));
              if (matcher.stopped) matched.abort();
            },
          });
          return ended(result.text, result.stopReason);
        } catch (error) {
          // node-llama-cpp throws the abort reason when the signal fires before the first
          // token; either way an aborted generation is a result, not a failure.
          if (options.signal?.aborted === true || matcher?.stopped === true) return ended(text, 'abort');
          throw error;
        }
      } finally {
        generator.dispose();
      }
    });
  }

  embed(inputs: readonly (string | readonly number[])[], signal?: AbortSignal): Promise<EmbedResult> {
    return this.residency.withModel('embedding', signal, async (loaded) => {
      loaded.embedding ??= loaded.model.createEmbeddingContext({
        contextSize: contextSizeFor(loaded.model, this.#options),
        ...(this.#options.threads !== undefined ? { threads: this.#options.threads } : {}),
      });
      const context = await loaded.embedding;
      const limit = Math.min(context.model.trainContextSize, contextSizeFor(loaded.model, this.#options));
      const vectors: number[][] = [];
      let promptTokens = 0;
      for (const [index, input] of inputs.entries()) {
        signal?.throwIfAborted();
        if (typeof input === 'string') await refuseOversizedText(tokenCounter(loaded), [input], limit, 'input', `input[${index}]`, signal);
        const tokens = typeof input === 'string' ? loaded.model.tokenize(input) : this.#checkTokens(loaded, input, index);
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

  /** Reranking shares the embedding lane: one request at a time on the model's own ranking context. */
  rank(query: string, documents: readonly string[], signal?: AbortSignal): Promise<RankResult> {
    return this.residency.withModel('embedding', signal, (loaded) => rankDocuments(loaded, this.id, this.#options, query, documents, signal));
  }

  #checkTokens(loaded: LoadedLlamaModel, input: readonly number[], index: number): Token[] {
    const vocabulary = loaded.model.fileInfo.metadata.tokenizer?.ggml?.tokens?.length ?? Number.POSITIVE_INFINITY;
    const bad = input.find((t) => t >= vocabulary);
    if (bad !== undefined) throw ApiError.invalidRequest(`input[${index}] holds token id ${bad}, outside this model's vocabulary of ${vocabulary}.`, 'input');
    return input as Token[];
  }

  /** A generation on a pooled sequence of the model's context. */
  #withSequence<T>(signal: AbortSignal | undefined, prompt: string, run: (loaded: LoadedLlamaModel, sequence: LlamaContextSequence) => Promise<T>): Promise<T> {
    return this.residency.withModel('generation', signal, async (loaded) => {
      const free = loaded.freeSequences;
      // The free sequence holding the longest prefix of this prompt (LlamaChat reuses it
      // instead of evaluating it again), else the lowest id, so running sequences stay
      // consecutive and llama.cpp decodes them in one pass (see chooseSequence).
      const chosen = chooseSequence(free, sequenceIdOf, (s) => this.#sequencePrompts.get(s), prompt);
      const sequence = chosen >= 0 ? free.splice(chosen, 1)[0]! : newSequence(loaded.lib, loaded.context, this.#options.speculative, loaded.draft);
      const predictedBefore = { ...sequence.tokenPredictions };
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
        if (sequence.tokenPredictor !== undefined) {
          const now = sequence.tokenPredictions;
          this.#options.log.debug({ model: this.id, validated: now.validated - predictedBefore.validated, refuted: now.refuted - predictedBefore.refuted }, 'token predictions');
        }
        if (healthy && !sequence.disposed) free.push(sequence);
        else if (!sequence.disposed) sequence.dispose();
      }
    });
  }
}
