import type { ChatMessage, LanguageModel } from '../inference/language-model.ts';
import { isRemoteModel } from '../inference/model-plane.ts';
import { isLocalToolName } from '../mcp/tool-names.ts';
import { ApiError } from '../shared/api-error.ts';
import { quoteInput } from '../shared/quote-input.ts';
import type { ChatCompletionRequest, ResponseRequest } from '../openai/openai-schemas.ts';
import type { PromptRequest } from '../anthropic/messages-schemas.ts';
import type { LocalContext } from '../mcp/local-context-marker.ts';

/**
 * The privacy rule on the chat paths: vault contents, files, credentials and local device
 * context never go to a remote model. A request carries such context when it offers svc's own
 * tools (their results are the spaces, files and device), replays a call of one or its result,
 * or asks for retrieval from knowledge spaces. To a model a remote upstream serves, such a
 * request is refused before anything is sent or searched: 403 `local_context_not_allowed`,
 * naming the first piece found and never quoting its content.
 */

function tool(name: string): string {
  return `the svc tool ${quoteInput(name)}`;
}

/**
 * The first local context in a chat completions request. A tool result answers a call of an
 * earlier assistant turn (toChatMessages checks that first), so results of svc's tools are
 * found at their call; a result that names an svc tool itself is found too.
 */
export function localContextInChat(body: ChatCompletionRequest): LocalContext | undefined {
  if (body.spaces != null) return { param: 'spaces', what: 'retrieval from knowledge spaces' };
  for (const [i, t] of (body.tools ?? []).entries()) {
    if (isLocalToolName(t.function.name)) return { param: `tools[${i}].function.name`, what: tool(t.function.name) };
  }
  for (const [i, message] of body.messages.entries()) {
    for (const [j, call] of (message.tool_calls ?? []).entries()) {
      if (isLocalToolName(call.function.name)) return { param: `messages[${i}].tool_calls[${j}].function.name`, what: `a call of ${tool(call.function.name)}` };
    }
    if (message.role === 'tool' && message.name != null && isLocalToolName(message.name)) {
      return { param: `messages[${i}].name`, what: `the result of ${tool(message.name)}` };
    }
  }
  return undefined;
}

/** The first local context in a Responses request: svc's tools among its tools or calls (outputs answer calls in input). */
export function localContextInResponse(body: Pick<ResponseRequest, 'tools' | 'input'>): LocalContext | undefined {
  for (const [i, t] of (body.tools ?? []).entries()) {
    if (t.type === 'function' && typeof t.name === 'string' && isLocalToolName(t.name)) return { param: `tools[${i}].name`, what: tool(t.name) };
  }
  for (const [i, item] of body.input.entries()) {
    if (item.type === 'function_call' && isLocalToolName(item.name)) return { param: `input[${i}].name`, what: `a call of ${tool(item.name)}` };
  }
  return undefined;
}

/**
 * The first local context in the conversation a continuation (`previous_response_id`) replays: a
 * call of svc's tools in a stored or remembered response is local context as if sent in input.
 */
export function localContextInHistory(history: readonly ChatMessage[]): LocalContext | undefined {
  for (const message of history) {
    for (const call of message.toolCalls ?? []) {
      if (isLocalToolName(call.name)) return { param: 'previous_response_id', what: `a call of ${tool(call.name)} in the previous responses` };
    }
  }
  return undefined;
}

/**
 * The first local context in an Anthropic Messages request: svc's tools among its tools, or a
 * `tool_use` of one in the conversation (a `tool_result` answers a tool_use of the turn before,
 * which toEngineMessages checks, so results of svc's tools are found at their call).
 */
export function localContextInMessages(body: Pick<PromptRequest, 'tools' | 'messages'>): LocalContext | undefined {
  for (const [i, t] of (body.tools ?? []).entries()) {
    if (isLocalToolName(t.name)) return { param: `tools[${i}].name`, what: tool(t.name) };
  }
  for (const [i, message] of body.messages.entries()) {
    if (typeof message.content === 'string') continue;
    for (const [j, block] of message.content.entries()) {
      if (block.type === 'tool_use' && typeof block.name === 'string' && isLocalToolName(block.name)) {
        return { param: `messages[${i}].content[${j}].name`, what: `a call of ${tool(block.name)}` };
      }
    }
  }
  return undefined;
}

/** 403 for local context on its way to a model a remote upstream serves. */
export function localContextRefused(modelId: string, found: LocalContext): ApiError {
  return new ApiError({
    status: 403,
    type: 'permission_error',
    code: 'local_context_not_allowed',
    param: found.param,
    message: `The model ${quoteInput(modelId)} is served by a remote upstream, and this request carries local context (${found.what} at ${found.param}). ` +
      'Vault contents, files, credentials and local device context stay on this machine: use a local model, or leave the local context out.',
  });
}

/** Throws the 403 above when `model` is remote and `find` finds local context in the request. */
export function refuseLocalContext(model: LanguageModel, find: () => LocalContext | undefined): void {
  if (!isRemoteModel(model)) return;
  const found = find();
  if (found !== undefined) throw localContextRefused(model.id, found);
}
