import type { GenerateResult, GenerationPart } from '../inference/language-model.ts';

/** The `delta` of a streamed chunk, as OpenAI streams text and tool calls. */
export function deltaOf(part: GenerationPart): object {
  switch (part.type) {
    case 'text-delta': return { content: part.text };
    case 'tool-call-start': return { tool_calls: [{ index: part.index, id: part.id, type: 'function', function: { name: part.name, arguments: '' } }] };
    case 'tool-call-delta': return { tool_calls: [{ index: part.index, function: { arguments: part.argumentsDelta } }] };
  }
}

/** The assistant message of a whole reply: `content` is null when the model only called tools, as OpenAI sends it. */
export function messageOf(result: GenerateResult): object {
  if (result.toolCalls.length === 0) return { role: 'assistant', content: result.text, refusal: null };
  return {
    role: 'assistant',
    content: result.text === '' ? null : result.text,
    refusal: null,
    tool_calls: result.toolCalls.map((call) => ({ id: call.id, type: 'function', function: { name: call.name, arguments: call.arguments } })),
  };
}
