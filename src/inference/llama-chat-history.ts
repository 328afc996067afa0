import type { ChatHistoryItem, ChatModelFunctionCall, ChatModelResponse } from 'node-llama-cpp';
import { ApiError } from '../shared/api-error.ts';
import { quoteInput } from '../shared/quote-input.ts';
import type { ChatMessage } from './language-model.ts';

/** JSON text as a value (what chat templates render best), or the text itself when it is not JSON. */
function jsonOrText(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/**
 * OpenAI-style turns → node-llama-cpp's chat history, ending with the model turn to generate.
 *
 * node-llama-cpp keeps a tool exchange inside one model turn: the response holds the call,
 * its result, and whatever the model said after it. So an assistant message's `tool_calls`
 * become `functionCall` items, each `tool` message fills in its call's `result`, and an
 * assistant message that follows tool results continues that same model turn. The chat
 * wrapper renders all of it in the model's own template syntax, with or without `tools` in
 * this request. A conversation that ends with tool results is continued in that turn.
 */
export function toChatHistory(messages: readonly ChatMessage[]): ChatHistoryItem[] {
  const history: ChatHistoryItem[] = [];
  const calls = new Map<string, ChatModelFunctionCall>();
  const answered = new Set<string>();
  /** The model turn that tool results (and what the model said after them) belong to. */
  let openTurn: ChatModelResponse | undefined;
  for (const message of messages) {
    switch (message.role) {
      case 'system':
        history.push({ type: 'system', text: message.content });
        openTurn = undefined;
        break;
      case 'user':
        history.push({ type: 'user', text: message.content });
        openTurn = undefined;
        break;
      case 'assistant': {
        const turn = openTurn ?? { type: 'model', response: [] };
        if (openTurn === undefined) history.push(turn);
        if (message.content !== '') turn.response.push(message.content);
        for (const call of message.toolCalls ?? []) {
          const item: ChatModelFunctionCall = { type: 'functionCall', name: call.name, params: jsonOrText(call.arguments), result: undefined };
          turn.response.push(item);
          calls.set(call.id, item);
        }
        openTurn = (message.toolCalls?.length ?? 0) > 0 ? turn : undefined;
        break;
      }
      case 'tool': {
        const id = message.toolCallId ?? '';
        const call = calls.get(id);
        if (call === undefined) throw ApiError.invalidRequest(`A tool result answers ${quoteInput(id)}, which no earlier assistant message called.`, 'messages');
        call.result = jsonOrText(message.content);
        answered.add(id);
        break;
      }
    }
  }
  for (const id of calls.keys()) {
    if (!answered.has(id)) {
      // As OpenAI requires: a model cannot continue past a call whose result it never saw.
      throw ApiError.invalidRequest(`The tool call ${quoteInput(id)} has no tool result; every tool call must be answered by a 'tool' message before the conversation goes on.`, 'messages');
    }
  }
  const last = history.at(-1);
  const continuesToolTurn = last?.type === 'model' && last === openTurn && typeof last.response.at(-1) === 'object';
  if (!continuesToolTurn) history.push({ type: 'model', response: [] });
  return history;
}
