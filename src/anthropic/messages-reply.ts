import type { GenerateResult, TokenUsage } from '../inference/language-model.ts';
import { toolUseId } from './messages-request.ts';

/** Why a reply ended, in Anthropic's words. */
export type AnthropicStopReason = 'end_turn' | 'max_tokens' | 'stop_sequence' | 'tool_use' | 'refusal' | 'model_context_window_exceeded';

export interface AnthropicUsage {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
}

export type AnthropicContentBlock =
  | { type: 'text'; text: string }
  | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> };

export interface AnthropicMessage {
  id: string;
  type: 'message';
  role: 'assistant';
  model: string;
  content: AnthropicContentBlock[];
  stop_reason: AnthropicStopReason;
  stop_sequence: string | null;
  usage: AnthropicUsage;
}

/**
 * The engine's finish → Anthropic's `stop_reason` and `stop_sequence`. A reply with tool calls
 * ends in `tool_use` unless it was cut (some upstreams finish a call with `stop`; Anthropic's
 * clients loop on `tool_use`). Cut by the token budget: `max_tokens` when the reply used all of
 * `max_tokens`, else the context ran out first (`model_context_window_exceeded`). `stop` is
 * `stop_sequence` when the engine names the sequence (the llama.cpp engine; an OpenAI-compatible
 * upstream does not say, so its replies end in `end_turn`).
 */
export function anthropicStop(result: GenerateResult, maxTokens: number): { stop_reason: AnthropicStopReason; stop_sequence: string | null } {
  switch (result.finishReason) {
    case 'length':
      return { stop_reason: result.usage.completionTokens < maxTokens ? 'model_context_window_exceeded' : 'max_tokens', stop_sequence: null };
    case 'content_filter':
      return { stop_reason: 'refusal', stop_sequence: null };
    default:
      if (result.toolCalls.length > 0) return { stop_reason: 'tool_use', stop_sequence: null };
      if (result.finishReason === 'stop' && result.stopSequence !== undefined) return { stop_reason: 'stop_sequence', stop_sequence: result.stopSequence };
      return { stop_reason: 'end_turn', stop_sequence: null };
  }
}

export function anthropicUsage(usage: TokenUsage): AnthropicUsage {
  return { input_tokens: usage.promptTokens, output_tokens: usage.completionTokens, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
}

/**
 * A call's JSON arguments as a `tool_use` block's `input` object. Grammar makes them an object
 * that matches the tool's schema; a call cut short by `max_tokens` is not JSON yet and has
 * `input: {}` (its stop_reason says it was cut; streamed, its partial JSON was sent as written).
 */
export function toolInput(args: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(args);
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {
    // cut short: see above
  }
  return {};
}

/** The whole reply as Anthropic's Message: a text block (unless empty), then one tool_use block per call. */
export function anthropicMessage(id: string, model: string, result: GenerateResult, maxTokens: number): AnthropicMessage {
  const content: AnthropicContentBlock[] = [];
  if (result.text !== '') content.push({ type: 'text', text: result.text });
  for (const call of result.toolCalls) content.push({ type: 'tool_use', id: toolUseId(call.id), name: call.name, input: toolInput(call.arguments) });
  return { id, type: 'message', role: 'assistant', model, content, ...anthropicStop(result, maxTokens), usage: anthropicUsage(result.usage) };
}
