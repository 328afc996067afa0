/**
 * One generation over HTTP, whole or streamed, as the tests compare them: the reply's text (or,
 * streamed, its deltas joined), finish reason, completion tokens and tool calls (streamed calls
 * reassembled from their deltas).
 */
import assert from 'node:assert/strict';

export interface Generation {
  text: string;
  finish: string | null;
  completionTokens: number;
  /** The streamed deltas of the text, one per event (empty when not streamed). */
  deltas: string[];
  toolCalls: { name: string; arguments: string }[];
}

interface Choice {
  message?: { content: string | null; tool_calls?: { function: { name: string; arguments: string } }[] };
  delta?: { content?: string; tool_calls?: { index: number; function?: { name?: string; arguments?: string } }[] };
  text?: string;
  finish_reason: string | null;
}

export async function generateText(baseUrl: string, path: 'chat/completions' | 'completions', body: Record<string, unknown>, stream: boolean): Promise<Generation> {
  const res = await fetch(`${baseUrl}/v1/${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ ...body, ...(stream ? { stream: true, stream_options: { include_usage: true } } : {}) }),
  });
  assert.equal(res.status, 200, await res.clone().text());
  if (!stream) {
    const json = (await res.json()) as { choices: Choice[]; usage: { completion_tokens: number } };
    const choice = json.choices[0]!;
    return {
      text: choice.message?.content ?? choice.text ?? '',
      finish: choice.finish_reason,
      completionTokens: json.usage.completion_tokens,
      deltas: [],
      toolCalls: (choice.message?.tool_calls ?? []).map((c) => ({ name: c.function.name, arguments: c.function.arguments })),
    };
  }
  const out: Generation = { text: '', finish: null, completionTokens: -1, deltas: [], toolCalls: [] };
  for (const event of (await res.text()).split('\n\n')) {
    if (!event.startsWith('data: {')) continue;
    const chunk = JSON.parse(event.slice(6)) as { choices: Choice[]; usage?: { completion_tokens: number } };
    for (const c of chunk.choices) {
      const delta = c.delta?.content ?? c.text ?? '';
      if (delta !== '') out.deltas.push(delta);
      out.text += delta;
      for (const call of c.delta?.tool_calls ?? []) {
        out.toolCalls[call.index] ??= { name: '', arguments: '' };
        out.toolCalls[call.index]!.name += call.function?.name ?? '';
        out.toolCalls[call.index]!.arguments += call.function?.arguments ?? '';
      }
      if (c.finish_reason !== null) out.finish = c.finish_reason;
    }
    if (chunk.usage) out.completionTokens = chunk.usage.completion_tokens;
  }
  return out;
}
