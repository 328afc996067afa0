import type { ChatMessage } from '../inference/language-model.ts';
import { ApiError } from '../shared/api-error.ts';
import { newId } from '../shared/new-id.ts';
import type { ResponseRequest } from './openai-schemas.ts';

/**
 * `POST /v1/responses/compact` (Open Responses): a conversation becomes a shorter input window
 * that a new response starts from. svc's window keeps every user message verbatim (what the user
 * said is never paraphrased) and replaces everything else (assistant replies, tool calls and
 * their outputs, instructions, earlier compactions) with one `compaction` item: a summary the
 * model itself writes. OpenAI encrypts that item's `encrypted_content`; svc runs on the user's
 * own machine, where there is nobody to hide it from, so it is the summary's UTF-8 in base64url
 * behind a version prefix: opaque to clients, as the spec asks, but readable on purpose.
 */
const PREFIX = 'svc-compaction-v1:';

/** How long the summary may grow, in tokens: a window that outgrows this is no longer compact. */
export const COMPACTION_SUMMARY_MAX_TOKENS = 1024;

const SUMMARY_REQUEST = [
  'Summarize the conversation so far for your own later use: the facts, decisions, names, numbers,',
  'tool results and open questions it contains, in plain sentences. Leave out greetings and filler.',
  'Write only the summary.',
].join(' ');

/** The `encrypted_content` of a compaction item carrying `summary`. */
export function compactionContent(summary: string): string {
  return PREFIX + Buffer.from(summary, 'utf8').toString('base64url');
}

const BASE64URL = /^[A-Za-z0-9_-]*$/;

/** The engine turn a compaction item stands for; 400 naming `param` for content svc did not write. */
export function compactedSummary(content: string, param: string): string {
  const body = content.startsWith(PREFIX) ? content.slice(PREFIX.length) : undefined;
  if (body === undefined || !BASE64URL.test(body)) {
    throw ApiError.invalidRequest(`${param} is not a compaction svc wrote: send the compaction item POST /v1/responses/compact returned, unchanged.`, param, 'invalid_compaction');
  }
  return `Summary of the earlier conversation (compacted):\n${Buffer.from(body, 'base64url').toString('utf8')}`;
}

/** The turns the model summarizes: the conversation, then the request to summarize it. */
export function compactionPrompt(conversation: readonly ChatMessage[]): ChatMessage[] {
  return [...conversation, { role: 'user', content: SUMMARY_REQUEST }];
}

function userText(content: Extract<ResponseRequest['input'][number], { type: 'message' }>['content']): string {
  return typeof content === 'string' ? content : content.map((part) => ('text' in part && typeof part.text === 'string' ? part.text : '')).join('');
}

/** The compacted window: the user's messages as they were sent, then the summary's compaction item. */
export function compactedWindow(input: ResponseRequest['input'], summary: string): object[] {
  const kept = input.flatMap((item) => (item.type === 'message' && item.role === 'user'
    ? [{ id: newId('msg_'), type: 'message', status: 'completed', role: 'user', content: [{ type: 'input_text', text: userText(item.content) }] }]
    : []));
  return [...kept, { id: newId('cmp_'), type: 'compaction', encrypted_content: compactionContent(summary) }];
}
