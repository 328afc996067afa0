import type { ChatMessage, ChatOptions, ResponseFormat, ToolChoice, ToolDefinition } from '../inference/language-model.ts';
import { ApiError } from '../shared/api-error.ts';
import { quoteInput } from '../shared/quote-input.ts';
import type { ChatCompletionRequest } from './openai-schemas.ts';

type OpenAIMessage = ChatCompletionRequest['messages'][number];

/**
 * Text content parts joined by newlines (`textTypes`: the part types that carry text in the
 * caller's API); any other part (image, audio, file) is refused, naming where it is.
 */
export function joinTextParts(parts: readonly { type: string; text?: unknown }[], param: string, textTypes: ReadonlySet<string>): string {
  return parts.map((part, j) => {
    if (textTypes.has(part.type) && typeof part.text === 'string') return part.text;
    throw ApiError.invalidRequest(
      `${param}[${j}] is a ${quoteInput(part.type)} part; the local models take text parts only.`,
      `${param}[${j}].type`, 'unsupported_value',
    );
  }).join('\n');
}

const CHAT_TEXT_PARTS: ReadonlySet<string> = new Set(['text']);

function textOf(message: OpenAIMessage, i: number): string | undefined {
  const content = message.content;
  if (content === null || content === undefined) return undefined;
  if (typeof content === 'string') return content;
  return joinTextParts(content, `messages[${i}].content`, CHAT_TEXT_PARTS);
}

/**
 * OpenAI messages → engine turns. Tool results must answer a call an earlier assistant turn
 * made (by `tool_call_id`), as OpenAI requires; a model cannot make sense of one that does not.
 */
export function toChatMessages(messages: ChatCompletionRequest['messages']): ChatMessage[] {
  const callIds = new Set<string>();
  return messages.map((message, i): ChatMessage => {
    if (message.role === 'function') {
      throw ApiError.invalidRequest(`messages[${i}]: 'function' messages are the deprecated form of tool results; send role 'tool' with tool_call_id.`, `messages[${i}].role`, 'unsupported_value');
    }
    const content = textOf(message, i);
    if (message.role === 'tool') {
      const id = message.tool_call_id;
      if (id == null) throw ApiError.invalidRequest(`messages[${i}].tool_call_id is required for 'tool' messages.`, `messages[${i}].tool_call_id`);
      if (!callIds.has(id)) {
        throw ApiError.invalidRequest(`messages[${i}].tool_call_id ${quoteInput(id)} answers no tool call of an earlier assistant message.`, `messages[${i}].tool_call_id`);
      }
      return { role: 'tool', content: content ?? '', toolCallId: id };
    }
    if (message.role === 'assistant') {
      const toolCalls = (message.tool_calls ?? []).map((call) => ({ id: call.id, name: call.function.name, arguments: call.function.arguments }));
      for (const call of toolCalls) callIds.add(call.id);
      return { role: 'assistant', content: content ?? '', ...(toolCalls.length > 0 ? { toolCalls } : {}) };
    }
    if (content === undefined) throw ApiError.invalidRequest(`messages[${i}].content is required for '${message.role}' messages.`, `messages[${i}].content`);
    return { role: message.role === 'developer' ? 'system' : message.role, content };
  });
}

/** A tool choice as either API sends it: a mode, or the name of one function. */
export type RequestedToolChoice = 'auto' | 'none' | 'required' | { name: string };

type ToolOptions = Pick<ChatOptions, 'tools' | 'toolChoice' | 'parallelToolCalls' | 'responseFormat'>;

/**
 * Tools, tool choice and output shape checked against each other, by the rules chat and the
 * Responses API share: tool names are unique, `required` needs a tool, a named choice names
 * one of the tools. `param` gives each field's name in the caller's API.
 */
export function toolOptions(
  request: { tools: ToolDefinition[]; toolChoice: RequestedToolChoice | undefined; parallelToolCalls: boolean | undefined; responseFormat: ResponseFormat | undefined },
  param: { toolName: (index: number) => string; choiceName: string },
): ToolOptions {
  const { tools } = request;
  const names = new Set<string>();
  for (const [i, tool] of tools.entries()) {
    if (names.has(tool.name)) throw ApiError.invalidRequest(`tools[${i}]: two tools are named ${quoteInput(tool.name)}.`, param.toolName(i));
    names.add(tool.name);
  }
  let toolChoice: ToolChoice | undefined;
  const choice = request.toolChoice;
  if (typeof choice === 'string') {
    if (choice === 'required' && tools.length === 0) throw ApiError.invalidRequest("tool_choice 'required' needs at least one tool in tools.", 'tool_choice');
    toolChoice = { type: choice };
  } else if (choice !== undefined) {
    if (!names.has(choice.name)) throw ApiError.invalidRequest(`tool_choice names the function ${quoteInput(choice.name)}, which is not in tools.`, param.choiceName);
    toolChoice = { type: 'function', name: choice.name };
  }
  const format = request.responseFormat;
  return {
    ...(tools.length > 0 ? { tools } : {}),
    ...(toolChoice !== undefined && tools.length > 0 ? { toolChoice } : {}),
    ...(request.parallelToolCalls !== undefined ? { parallelToolCalls: request.parallelToolCalls } : {}),
    ...(format !== undefined && format.type !== 'text' ? { responseFormat: format } : {}),
  };
}

function responseFormatOf(body: ChatCompletionRequest): ResponseFormat | undefined {
  const format = body.response_format;
  if (format == null) return undefined;
  if (format.type !== 'json_schema') return { type: format.type };
  const { name, schema, strict } = format.json_schema;
  // OpenAI accepts a json_schema without a schema (any JSON object); so do we.
  if (schema == null) return { type: 'json_object' };
  return { type: 'json_schema', name, schema, strict: strict === true };
}

/** The tool and output-shape options of a chat request, checked against each other. */
export function toChatOptions(body: ChatCompletionRequest): ToolOptions {
  if ((body.functions?.length ?? 0) > 0 || body.function_call != null) {
    throw ApiError.unsupported('functions', 'functions and function_call are the deprecated forms of tools and tool_choice; send tools instead.');
  }
  const choice = body.tool_choice;
  return toolOptions({
    tools: (body.tools ?? []).map((tool) => ({
      name: tool.function.name,
      description: tool.function.description ?? undefined,
      parameters: tool.function.parameters ?? undefined,
      strict: tool.function.strict ?? undefined,
    })),
    toolChoice: choice == null || typeof choice === 'string' ? (choice ?? undefined) : { name: choice.function.name },
    parallelToolCalls: body.parallel_tool_calls ?? undefined,
    responseFormat: responseFormatOf(body),
  }, { toolName: (i) => `tools[${i}].function.name`, choiceName: 'tool_choice.function.name' });
}

/** Refuses what a chat request may ask that svc does not do (several choices, logprobs, audio, web search), naming the parameter. */
export function refuseUnsupported(body: ChatCompletionRequest): void {
  if ((body.n ?? 1) !== 1) throw ApiError.unsupported('n', 'n must be 1: svc generates one choice per chat request.');
  if (body.logprobs === true || body.top_logprobs != null) throw ApiError.unsupported('logprobs', 'logprobs are not available from the local runtime yet.');
  if (body.logit_bias != null && Object.keys(body.logit_bias).length > 0) throw ApiError.unsupported('logit_bias', 'logit_bias is not available from the local runtime yet.');
  if (body.modalities != null && body.modalities.some((m) => m !== 'text')) throw ApiError.unsupported('modalities', 'The local models produce text only.');
  if (body.audio != null) throw ApiError.unsupported('audio', 'Audio output is not available from the local runtime.');
  if (body.web_search_options != null) throw ApiError.unsupported('web_search_options', 'Web search is not available: svc has no search tool of its own (its local models cannot search, and upstream models get no web_search_options).');
}
