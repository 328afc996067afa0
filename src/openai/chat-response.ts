import type { GenerateResult, GenerationPart } from '../inference/language-model.ts';
import { newId } from '../shared/new-id.ts';
import { openAIFinishReason } from './openai-finish-reason.ts';
import { toOpenAIUsage } from './openai-usage.ts';
import type { StreamShape } from './stream-shape.ts';

/** The fields every chunk and the whole completion of one chat answer begin with. */
export interface ChatHead {
  id: string;
  created: number;
  model: string;
  system_fingerprint: string;
}

export function chatHead(model: string, fingerprint: string): ChatHead {
  return { id: newId('chatcmpl-'), created: Math.floor(Date.now() / 1000), model, system_fingerprint: fingerprint };
}

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

/** A whole `chat.completion`; `extension` adds a face's own fields (svc_retrieval locally, svc_route on the hosted tier). */
export function chatCompletion(head: ChatHead, results: readonly GenerateResult[], extension?: Readonly<Record<string, unknown>>): Record<string, unknown> {
  return {
    ...head,
    object: 'chat.completion',
    choices: results.map((r, index) => ({ index, message: messageOf(r), logprobs: null, finish_reason: openAIFinishReason(r.finishReason) })),
    usage: toOpenAIUsage(results),
    ...extension,
  };
}

/**
 * A chat answer's chunks, for StreamWriter: the assistant role first, a delta per part, the
 * finish chunk (with `finishExtension`, the local face's svc_retrieval) and a usage chunk with
 * empty choices (with the fields a face adds there).
 */
export function chatStreamShape(head: ChatHead, finishExtension?: Readonly<Record<string, unknown>>): StreamShape {
  const chunk = (choice: object) => ({ ...head, object: 'chat.completion.chunk', choices: [{ index: 0, logprobs: null, finish_reason: null, ...choice }] });
  return {
    start: () => chunk({ delta: { role: 'assistant', content: '' } }),
    part: (_index, part) => chunk({ delta: deltaOf(part) }),
    finish: (_index, reason) => ({ ...chunk({ delta: {}, finish_reason: reason }), ...finishExtension }),
    usage: (usage, extension) => ({ ...head, object: 'chat.completion.chunk', choices: [], usage, ...extension }),
  };
}

type StoredChoice = {
  message: { content: string | null; tool_calls?: { id: string; type: string; function: { name: string; arguments: string } }[] };
  finish_reason: string;
};

/**
 * A whole `chat.completion` as the chunks of a stream (a stored answer replayed for a retried
 * streamed request): the role, the content in one delta, each tool call whole, the finish and
 * the usage chunk with `usageExtension`. The chunks keep the fields in the order replays have
 * always been sent in.
 */
export function chatCompletionChunks(completion: Readonly<Record<string, unknown>>, usageExtension?: Readonly<Record<string, unknown>>): unknown[] {
  const head = { id: completion.id, created: completion.created, model: completion.model, system_fingerprint: completion.system_fingerprint, object: 'chat.completion.chunk' };
  const choice = (completion.choices as StoredChoice[])[0]!;
  const chunks: unknown[] = [{ ...head, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null }] }];
  if (choice.message.content !== null && choice.message.content !== '') {
    chunks.push({ ...head, choices: [{ index: 0, delta: { content: choice.message.content }, logprobs: null, finish_reason: null }] });
  }
  for (const [index, call] of (choice.message.tool_calls ?? []).entries()) {
    chunks.push({ ...head, choices: [{ index: 0, delta: { tool_calls: [{ index, id: call.id, type: 'function', function: call.function }] }, logprobs: null, finish_reason: null }] });
  }
  chunks.push({ ...head, choices: [{ index: 0, delta: {}, logprobs: null, finish_reason: choice.finish_reason }] });
  chunks.push({ ...head, choices: [], usage: completion.usage, ...usageExtension });
  return chunks;
}
