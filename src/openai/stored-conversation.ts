import type { ChatMessage } from '../inference/language-model.ts';
import { ApiError } from '../shared/api-error.ts';
import { newId } from '../shared/new-id.ts';
import { quoteInput } from '../shared/quote-input.ts';
import type { ResponseInputItem } from './openai-schemas.ts';
import type { ChainLink, ResponseStore, StoredItem } from './response-store.ts';
import { toInputMessages } from './responses-request.ts';

/**
 * The most stored JSON (in characters, over a whole chain) a continuation reads back: as a
 * WebSocket connection's memory (responses-memory.ts), far more than any local context holds.
 */
export const MAX_CHAIN_CHARS = 32 * 1024 * 1024;

const ITEM_ID_PREFIX: Readonly<Record<ResponseInputItem['type'], string>> = {
  message: 'msg_', function_call: 'fc_', function_call_output: 'fco_', item_reference: 'ref_', compaction: 'cmp_',
};

/**
 * Input items as a stored response lists them (OpenAI's `input_items`): each with an `id` (the
 * one sent, or a new one) and a message's string content as one text part.
 */
export function toStoredItems(input: readonly ResponseInputItem[]): StoredItem[] {
  return input.map((item): StoredItem => {
    const id = typeof item.id === 'string' && item.id !== '' ? item.id : newId(ITEM_ID_PREFIX[item.type]);
    if (item.type === 'message' && typeof item.content === 'string') {
      const part = item.role === 'assistant' ? 'output_text' : 'input_text';
      return { ...item, id, content: [{ type: part, text: item.content }] };
    }
    return { ...item, id };
  });
}

/** A Response object's output items as the input items that replay them. */
function outputAsInput(response: Record<string, unknown>): ResponseInputItem[] {
  const output = Array.isArray(response.output) ? response.output as Record<string, unknown>[] : [];
  return output.flatMap((item): ResponseInputItem[] => {
    if (item.type === 'message') {
      const parts = Array.isArray(item.content) ? item.content as { type: string; text: string }[] : [];
      return [{ type: 'message', role: 'assistant', content: parts.filter((p) => p.type === 'output_text').map((p) => ({ type: 'output_text' as const, text: p.text })) }];
    }
    if (item.type === 'function_call') {
      return [{ type: 'function_call', call_id: String(item.call_id), name: String(item.name), arguments: String(item.arguments) }];
    }
    return [];
  });
}

/** A chain's conversation as input items: each response's inputs, then its output. Instructions are not part of it. */
export function chainItems(links: readonly ChainLink[]): ResponseInputItem[] {
  return links.flatMap((link) => [...(link.inputItems as unknown as ResponseInputItem[]), ...outputAsInput(link.response)]);
}

export function storedResponseNotFound(id: string, missing: string): ApiError {
  const why = missing === id
    ? `Previous response with id ${quoteInput(id)} not found: it was not stored (store: false, or another daemon), or it was deleted or passed the retention or size cap of svc's responses store.`
    : `Previous response with id ${quoteInput(id)} cannot be continued: ${quoteInput(missing)}, an earlier response of its conversation, was deleted or passed the retention or size cap of svc's responses store.`;
  return ApiError.invalidRequest(`${why} Start a new response with the whole conversation in input.`, 'previous_response_id', 'previous_response_not_found');
}

/**
 * The conversation stored response `id` ended (its chain's turns, instructions aside), as engine
 * turns; 400 `previous_response_not_found` when it or an earlier link is gone.
 */
export function recallStored(store: ResponseStore, id: string): ChatMessage[] {
  const chain = store.chain(id, MAX_CHAIN_CHARS);
  if (!chain.found) {
    if (chain.tooLarge === true) {
      throw ApiError.invalidRequest(
        `The conversation of previous response ${quoteInput(id)} is larger than svc reads back (${MAX_CHAIN_CHARS / 1024 / 1024} MiB of stored JSON); compact it (POST /v1/responses/compact) and start a new response.`,
        'previous_response_id', 'previous_response_too_large',
      );
    }
    throw storedResponseNotFound(id, chain.missing);
  }
  return toInputMessages(chainItems(chain.links), []);
}

/**
 * The `onFinal` of a ResponseBuilder whose response is kept: saves it with its input items. A
 * failure to write (a full disk) is logged and the response still answered, unstored.
 */
export function keepResponse(store: ResponseStore, input: readonly ResponseInputItem[], previousId: string | null, onError: (error: unknown) => void): (response: Record<string, unknown>) => void {
  const inputItems = toStoredItems(input);
  return (response) => {
    try {
      store.save({ id: String(response.id), previousId, response, inputItems });
    } catch (error) {
      onError(error);
    }
  };
}
