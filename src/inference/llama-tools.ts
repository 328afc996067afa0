import type * as NodeLlamaCppModule from 'node-llama-cpp';
import type {
  ChatModelFunctions,
  ChatWrapper,
  ChatWrapperGenerateContextStateOptions,
  ChatWrapperGeneratedContextState,
  LlamaChatResponseFunctionCallParamsChunk,
  LlamaText,
} from 'node-llama-cpp';
import { ApiError } from '../shared/api-error.ts';
import { newId } from '../shared/new-id.ts';
import { toGrammarSchema, type GrammarSchema } from './grammar-schema.ts';
import type { ChatOptions, GenerationPart, ToolCall } from './language-model.ts';

type NodeLlamaCpp = typeof NodeLlamaCppModule;

/** What an empty parameter list becomes: OpenAI's "no parameters" is a call with `{}`. */
const NO_PARAMETERS: GrammarSchema = { type: 'object', properties: {} };

/**
 * How one chat request uses tools on node-llama-cpp: which functions the template documents,
 * which ones the function-name grammar lets the model call, whether a call is forced, and how
 * many calls one turn may hold. `tool_choice` maps onto it as:
 *
 * - `auto`: all tools documented and callable; the model decides (node-llama-cpp detects the
 *   template's call syntax and grammar-constrains the name and arguments once it starts one).
 * - `required`: the same, but generation starts in function-calling mode, so a call is certain.
 * - a named function: every tool documented (the model still sees the whole toolbox, as with
 *   OpenAI), only that one callable, forced, one call.
 * - `none`: nothing documented or callable (past calls in the history still render).
 */
export interface ToolPlan {
  /** Documented in the prompt (undefined: no tools section). */
  documented?: ChatModelFunctions;
  /** Callable: the function-name grammar's alternatives (undefined: no function calling). */
  callable?: ChatModelFunctions;
  force: boolean;
  maxParallelFunctionCalls?: number;
}

/**
 * Checks every tool's parameter schema (400 naming the keyword node-llama-cpp's grammar cannot
 * enforce) and plans the request. Runs before the request waits for a sequence.
 */
export function planTools(options: Pick<ChatOptions, 'tools' | 'toolChoice' | 'parallelToolCalls'>): ToolPlan {
  const tools = options.tools ?? [];
  if (tools.length === 0) return { force: false };
  // Tool names are the client's ('constructor' is a valid one): a Map, and own properties for node-llama-cpp.
  const byName = new Map<string, { description?: string; params: GrammarSchema }>();
  for (const [i, tool] of tools.entries()) {
    const params = tool.parameters === undefined ? NO_PARAMETERS : toGrammarSchema(tool.parameters, `tools[${i}].function.parameters`, { rootObject: true });
    byName.set(tool.name, { ...(tool.description !== undefined ? { description: tool.description } : {}), params });
  }
  const functions: ChatModelFunctions = Object.fromEntries(byName);
  const choice = options.toolChoice ?? { type: 'auto' };
  const single = options.parallelToolCalls === false ? { maxParallelFunctionCalls: 1 } : {};
  switch (choice.type) {
    case 'none': return { force: false };
    case 'auto': return { documented: functions, callable: functions, force: false, ...single };
    case 'required': return { documented: functions, callable: functions, force: true, ...single };
    case 'function': {
      const only = byName.get(choice.name);
      // chat-request.ts already refuses a name that is not in tools; this guards other callers.
      if (only === undefined) throw ApiError.invalidRequest('tool_choice names a function that is not in tools.', 'tool_choice');
      return { documented: functions, callable: Object.fromEntries([[choice.name, only]]), force: true, maxParallelFunctionCalls: 1 };
    }
  }
}

/**
 * The model's chat wrapper, adjusted for this request's plan: it documents `documented` (not
 * just the callable subset LlamaChat passes it) and, when a call is forced, tells LlamaChat to
 * enter function-calling mode at once. That uses node-llama-cpp's own mechanism for wrappers
 * whose syntax begins every reply with a call (`noPrefixTrigger: functionCall`, or
 * `functionCall.initiallyEngaged`): the template's call prefix goes into the context and the
 * function-name grammar picks the name, so the model cannot answer in text.
 *
 * The wrapper is the model's own object with one method overridden (prototype delegation), so
 * every other method and setting is exactly the model's.
 */
export function chatWrapperFor(base: ChatWrapper, plan: ToolPlan, lib: NodeLlamaCpp): ChatWrapper {
  if (!plan.force && plan.documented === plan.callable) return base;
  const wrapper = Object.create(base) as ChatWrapper;
  wrapper.generateContextState = (options: ChatWrapperGenerateContextStateOptions): ChatWrapperGeneratedContextState => {
    const state = base.generateContextState({ ...options, availableFunctions: plan.documented });
    if (!plan.force) return state;
    if (state.functionCall !== undefined || state.ignoreStartText !== undefined) {
      return { ...state, functionCall: { initiallyEngaged: true, disengageInitiallyEngaged: [] } };
    }
    return {
      contextText: state.contextText,
      stopGenerationTriggers: state.stopGenerationTriggers,
      ...(state.rerender !== undefined ? { rerender: state.rerender } : {}),
      ...(state.detectFunctionCalls !== undefined ? { detectFunctionCalls: state.detectFunctionCalls } : {}),
      noPrefixTrigger: { type: 'functionCall', inject: forcedCallInjection(state, lib) },
    };
  };
  return wrapper;
}

/**
 * What goes before the call prefix when a call is forced: what the wrapper's own function-call
 * trigger would have put there (gpt-oss's Harmony format opens a channel first), else nothing.
 */
function forcedCallInjection(state: ChatWrapperGeneratedContextState, lib: NodeLlamaCpp): LlamaText {
  if (state.noPrefixTrigger?.type === 'functionCall') return state.noPrefixTrigger.inject;
  const trigger = state.prefixTriggers?.find((t) => t.type === 'functionCall');
  if (trigger === undefined || trigger.type !== 'functionCall') return lib.LlamaText([]);
  const kept = trigger.replaceTrigger === false ? [trigger.triggers[0] ?? lib.LlamaText([])] : [];
  return lib.LlamaText([...kept, trigger.inject ?? lib.LlamaText([])]);
}

/** node-llama-cpp ends a call's parameters with this (its params grammar's stop trigger). */
const PARAMS_END = '\n\n\n\n';

interface AssembledCall extends ToolCall {
  /** What was streamed so far (trailing newlines are held back: they may be PARAMS_END). */
  streamed: string;
  buffer: string;
  done: boolean;
}

/**
 * Turns node-llama-cpp's function-call callbacks into tool-call parts and calls: a start (a
 * fresh `call_…` id and the name) at the first parameters chunk, then argument deltas. The
 * terminator node-llama-cpp generates after the JSON is never streamed, so the deltas of a
 * call add up to exactly its final `arguments`.
 */
export class ToolCallAssembler {
  readonly #calls: AssembledCall[] = [];
  readonly #onPart: ((part: GenerationPart) => void) | undefined;

  constructor(onPart: ((part: GenerationPart) => void) | undefined) {
    this.#onPart = onPart;
  }

  #call(index: number, name: string): AssembledCall {
    let call = this.#calls[index];
    if (call === undefined) {
      call = { id: newId('call_'), name, arguments: '', streamed: '', buffer: '', done: false };
      this.#calls[index] = call;
      this.#onPart?.({ type: 'tool-call-start', index, id: call.id, name });
    }
    return call;
  }

  #stream(index: number, call: AssembledCall, upTo: string): void {
    const delta = upTo.slice(call.streamed.length);
    if (delta === '') return;
    call.streamed = upTo;
    this.#onPart?.({ type: 'tool-call-delta', index, argumentsDelta: delta });
  }

  /** `onFunctionCallParamsChunk` */
  chunk(chunk: LlamaChatResponseFunctionCallParamsChunk): void {
    const call = this.#call(chunk.callIndex, chunk.functionName);
    call.buffer += chunk.paramsChunk;
    // Hold back a trailing run of newlines: it may be the start of PARAMS_END.
    this.#stream(chunk.callIndex, call, call.buffer.replace(/\n+$/, ''));
  }

  /** `onFunctionCall`: the call is complete and its parameters parsed. */
  called(functionName: string, params: unknown): void {
    const index = this.#calls.findIndex((c) => c === undefined || !c.done);
    const at = index < 0 ? this.#calls.length : index;
    const call = this.#call(at, functionName);
    const end = call.buffer.lastIndexOf(PARAMS_END);
    // No parameters chunk at all happens only for a function without parameters.
    const text = call.buffer === '' ? JSON.stringify(params ?? {}) : end < 0 ? call.buffer : call.buffer.slice(0, end);
    this.#stream(at, call, text);
    call.arguments = text;
    call.done = true;
  }

  /** Every call, in order; a call cut short (max_tokens, abort) carries the arguments streamed so far. */
  calls(): ToolCall[] {
    return this.#calls.filter((c) => c !== undefined).map((c) => ({ id: c.id, name: c.name, arguments: c.done ? c.arguments : c.streamed }));
  }
}
