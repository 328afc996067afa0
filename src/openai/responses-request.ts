import type { ChatMessage, ChatOptions, LanguageModel, ResponseFormat, SamplingOptions, ToolDefinition } from '../inference/language-model.ts';
import { DEFAULT_TEMPERATURE, DEFAULT_TOP_P } from '../inference/llama-sampling.ts';
import { isRemoteModel } from '../inference/model-plane.ts';
import { ApiError } from '../shared/api-error.ts';
import { parseWithSchema } from '../shared/parse-with-schema.ts';
import { quoteInput } from '../shared/quote-input.ts';
import { joinTextParts, toolOptions, type RequestedToolChoice } from './chat-request.ts';
import { responseFunctionToolSchema, type ResponseInputItem, type ResponseRequest } from './openai-schemas.ts';
import type { ResponseSettings } from './response-builder.ts';
import { compactedSummary } from './response-compaction.ts';

/**
 * What svc cannot serve is refused with the reason. `storing`: whether the daemon keeps
 * responses (its responses store, off with `--responses-max-size 0`); without it the endpoint
 * is stateless and every request carries its whole conversation in `input`. WebSocket mode
 * remembers its connection's own responses either way.
 */
export function refuseStateful(body: ResponseRequest, transport: 'http' | 'websocket' = 'http', storing = false): void {
  const stateless = 'this svc keeps no responses (started with --responses-max-size 0): send the whole conversation in input.';
  if (body.store === true && !storing) throw ApiError.unsupported('store', `store: true is not supported; ${stateless} Send store: false or leave it out.`);
  if (body.previous_response_id != null && transport === 'http' && !storing) {
    throw ApiError.unsupported('previous_response_id', `previous_response_id is not supported over HTTP; ${stateless} (WebSocket mode of /v1/responses remembers the responses of its connection.)`);
  }
  if (body.conversation != null) throw ApiError.unsupported('conversation', 'conversation objects are not supported; chain responses with previous_response_id, or send the whole conversation in input.');
  if (body.background === true) throw ApiError.unsupported('background', 'background responses are not supported: svc answers each response while the request is open (stream: true to see it as it is written).');
  if (body.prompt != null) throw ApiError.unsupported('prompt', 'Stored prompt templates are not available locally; send instructions and input instead.');
  if ((body.include?.length ?? 0) > 0) throw ApiError.unsupported('include', `include ${quoteInput(body.include![0])} is not available from the local runtime.`);
  if (body.top_logprobs != null && body.top_logprobs > 0) throw ApiError.unsupported('top_logprobs', 'logprobs are not available from the local runtime yet.');
  if (body.max_tool_calls != null) throw ApiError.unsupported('max_tool_calls', 'max_tool_calls is not supported; use parallel_tool_calls: false for at most one call per response.');
}

const RESPONSE_TEXT_PARTS: ReadonlySet<string> = new Set(['input_text', 'output_text']);

function textOf(content: Extract<ResponseInputItem, { type: 'message' }>['content'], param: string): string {
  return typeof content === 'string' ? content : joinTextParts(content, param, RESPONSE_TEXT_PARTS);
}

/**
 * `instructions` + `input` items → engine turns. Consecutive `function_call` items join the
 * assistant turn before them (the chat form: one assistant message with several tool calls);
 * each `function_call_output` answers a call made earlier in `input`, by `call_id`.
 */
export function toResponseMessages(body: Pick<ResponseRequest, 'instructions' | 'input'>): ChatMessage[] {
  const instructions: ChatMessage[] = body.instructions != null && body.instructions !== '' ? [{ role: 'system', content: body.instructions }] : [];
  return [...instructions, ...toInputMessages(body.input, [])];
}

/**
 * `input` items → engine turns, after `history` (the turns of a previous response, whose
 * tool calls its `function_call_output` items may answer). Instructions are not part of a
 * history: as OpenAI's `previous_response_id`, they apply to the one response that sends them.
 */
export function toInputMessages(input: ResponseRequest['input'], history: readonly ChatMessage[]): ChatMessage[] {
  const messages: ChatMessage[] = [...history];
  const callIds = new Set<string>(history.flatMap((m) => (m.toolCalls ?? []).map((c) => c.id)));
  for (const [i, item] of input.entries()) {
    switch (item.type) {
      case 'message': {
        const content = textOf(item.content, `input[${i}].content`);
        const role = item.role === 'developer' ? 'system' : item.role;
        messages.push({ role, content });
        break;
      }
      case 'function_call': {
        const last = messages.at(-1);
        const call = { id: item.call_id, name: item.name, arguments: item.arguments };
        // A new object: the last turn may be a remembered one (history), which stays as it was.
        if (last?.role === 'assistant') messages[messages.length - 1] = { ...last, toolCalls: [...(last.toolCalls ?? []), call] };
        else messages.push({ role: 'assistant', content: '', toolCalls: [call] });
        callIds.add(item.call_id);
        break;
      }
      case 'function_call_output': {
        if (!callIds.has(item.call_id)) {
          throw ApiError.invalidRequest(`input[${i}].call_id ${quoteInput(item.call_id)} answers no function_call earlier in input${history.length > 0 ? ' or in the previous response' : ''}.`, `input[${i}].call_id`);
        }
        const output = typeof item.output === 'string' ? item.output : textOf(item.output, `input[${i}].output`);
        messages.push({ role: 'tool', content: output, toolCallId: item.call_id });
        break;
      }
      case 'compaction':
        messages.push({ role: 'system', content: compactedSummary(item.encrypted_content, `input[${i}].encrypted_content`) });
        break;
      case 'item_reference':
        throw ApiError.unsupported(`input[${i}]`, `input[${i}] is an item_reference to a stored item; svc does not resolve item references: send the item itself, or continue with previous_response_id. (Vercel AI SDK: providerOptions.openai.store = false.)`);
    }
  }
  return messages;
}

function toolsOf(body: ResponseRequest): ToolDefinition[] {
  return (body.tools ?? []).map((raw, i): ToolDefinition => {
    if (raw.type !== 'function') {
      throw ApiError.unsupported(`tools[${i}].type`, `tools[${i}] is a ${quoteInput(raw.type)} tool; the local runtime runs function tools only (hosted tools need OpenAI's servers).`);
    }
    const tool = parseWithSchema(responseFunctionToolSchema, raw, { prefix: `tools.${i}` });
    return {
      name: tool.name,
      description: tool.description ?? undefined,
      parameters: tool.parameters ?? undefined,
      strict: tool.strict ?? undefined,
    };
  });
}

function toolChoiceOf(body: ResponseRequest): RequestedToolChoice | undefined {
  const choice = body.tool_choice;
  if (choice == null || typeof choice === 'string') return choice ?? undefined;
  if (choice.type !== 'function' || typeof choice.name !== 'string') {
    throw ApiError.unsupported('tool_choice', `tool_choice of type ${quoteInput(choice.type)} is not supported; send 'auto', 'none', 'required' or {type: 'function', name}.`);
  }
  return { name: choice.name };
}

function formatOf(body: ResponseRequest): ResponseFormat | undefined {
  const format = body.text?.format;
  if (format == null || format.type === 'text') return undefined;
  if (format.type === 'json_object') return { type: 'json_object' };
  return { type: 'json_schema', name: format.name, schema: format.schema, strict: format.strict === true };
}

/** The tool and output-shape options of a Responses request, checked against each other. */
export function toResponseOptions(body: ResponseRequest): Pick<ChatOptions, 'tools' | 'toolChoice' | 'parallelToolCalls' | 'responseFormat'> {
  return toolOptions({
    tools: toolsOf(body),
    toolChoice: toolChoiceOf(body),
    parallelToolCalls: body.parallel_tool_calls ?? undefined,
    responseFormat: formatOf(body),
  }, { toolName: (i) => `tools[${i}].name`, choiceName: 'tool_choice.name' });
}

/** Engine errors name chat-completions fields; these are their Responses names. */
const RESPONSES_PARAMS: readonly [RegExp, string][] = [
  [/^messages\b/, 'input'],
  [/^max_tokens$/, 'max_output_tokens'],
  [/^tools\[(\d+)\]\.function\.parameters/, 'tools[$1].parameters'],
  [/^response_format\.json_schema\.schema/, 'text.format.schema'],
  [/^response_format$/, 'text.format'],
];

/** The same error with `param` (and its mention in the message) in the Responses API's terms. */
export function toResponsesError(error: unknown): unknown {
  if (!(error instanceof ApiError) || error.param === null) return error;
  const param = error.param;
  for (const [pattern, replacement] of RESPONSES_PARAMS) {
    if (!pattern.test(param)) continue;
    const renamed = param.replace(pattern, replacement);
    return new ApiError({ ...error.toOptions(), param: renamed, message: error.message.replaceAll(param, renamed), cause: error });
  }
  return error;
}

/**
 * The settings the Response object reports. What the request left out is the value that applied:
 * the local engine's sampling defaults (llama-sampling.ts); for an upstream model, whose own
 * defaults svc cannot see, OpenAI's documented ones (temperature 1, top_p 1). Function tools come
 * back in their full form (description, parameters and strict null when not sent).
 */
export function toResponseSettings(body: ResponseRequest, model: LanguageModel, sampling: SamplingOptions, store = false): ResponseSettings {
  const remote = isRemoteModel(model);
  return {
    model: model.id,
    store,
    previousResponseId: body.previous_response_id ?? null,
    instructions: body.instructions ?? null,
    maxOutputTokens: body.max_output_tokens ?? null,
    temperature: sampling.temperature ?? (remote ? 1 : DEFAULT_TEMPERATURE),
    topP: sampling.topP ?? (remote ? 1 : DEFAULT_TOP_P),
    presencePenalty: sampling.presencePenalty ?? 0,
    frequencyPenalty: sampling.frequencyPenalty ?? 0,
    topLogprobs: body.top_logprobs ?? 0,
    parallelToolCalls: body.parallel_tool_calls ?? true,
    toolChoice: body.tool_choice ?? 'auto',
    tools: (body.tools ?? []).map((raw) => {
      const tool = parseWithSchema(responseFunctionToolSchema, raw);
      return { type: 'function', name: tool.name, description: tool.description ?? null, parameters: tool.parameters ?? null, strict: tool.strict ?? null };
    }),
    text: { format: body.text?.format ?? { type: 'text' }, ...(body.text?.verbosity != null ? { verbosity: body.text.verbosity } : {}) },
    truncation: body.truncation ?? 'disabled',
    serviceTier: body.service_tier ?? 'default',
    safetyIdentifier: body.safety_identifier ?? null,
    promptCacheKey: body.prompt_cache_key ?? null,
    metadata: body.metadata ?? {},
    user: body.user ?? null,
  };
}
