import { anthropicMessage, type AnthropicContentBlock } from '../../anthropic/messages-reply.ts';
import { MessagesStream } from '../../anthropic/messages-stream.ts';
import { SseEvents } from '../../openai/stream-shape.ts';
import { newId } from '../../shared/new-id.ts';
import type { RouteResult } from '../routing/route-executor.ts';
import type { EvidenceFields, HostedFace } from '../chat/hosted-face.ts';
import { hostedAnthropicErrorBody } from './hosted-anthropic-error.ts';

/**
 * The completion cap Anthropic's stop reason is read against: a run the Joule ceiling stopped
 * ended where its budget did, which Anthropic's clients know as `max_tokens` (not a full context).
 */
function stopCap(result: RouteResult, maxTokens: number): number {
  return result.outcome === 'stopped_at_joule_ceiling' ? Math.min(maxTokens, result.usage.completionTokens) : maxTokens;
}

type Event = { event: string; data: unknown };

/**
 * A stored Message (with its evidence fields) as the event sequence a stream of it sends:
 * message_start, ping, each block whole in one delta, message_delta (with `svc_route` and
 * `svc_outcome`, as the live stream carries them) and message_stop.
 */
function storedMessageEvents(stored: Readonly<Record<string, unknown>>): { chunks: unknown[]; doneSentinel: boolean } {
  const { svc_route, svc_outcome, content, stop_reason, stop_sequence, usage, ...head } = stored;
  const blocks = Array.isArray(content) ? content as AnthropicContentBlock[] : [];
  const events: Event[] = [
    { event: 'message_start', data: { type: 'message_start', message: { ...head, content: [], stop_reason: null, stop_sequence: null, usage: { ...(usage as object), output_tokens: 0 } } } },
    { event: 'ping', data: { type: 'ping' } },
  ];
  for (const [index, block] of blocks.entries()) {
    const start = block.type === 'text' ? { type: 'text', text: '' } : { ...block, input: {} };
    const delta = block.type === 'text' ? { type: 'text_delta', text: block.text } : { type: 'input_json_delta', partial_json: JSON.stringify(block.input) };
    events.push(
      { event: 'content_block_start', data: { type: 'content_block_start', index, content_block: start } },
      { event: 'content_block_delta', data: { type: 'content_block_delta', index, delta } },
      { event: 'content_block_stop', data: { type: 'content_block_stop', index } },
    );
  }
  events.push(
    { event: 'message_delta', data: { type: 'message_delta', delta: { stop_reason, stop_sequence }, usage, svc_route, svc_outcome } },
    { event: 'message_stop', data: { type: 'message_stop' } },
  );
  return { chunks: [new SseEvents(events)], doneSentinel: false };
}

/**
 * Anthropic's Messages as the hosted tier answers them (one face per request: the Message's
 * `max_tokens` decides its stop reason). The whole Message carries `svc_route` and `svc_outcome`
 * beside its own fields, as a chat completion does; a stream carries them on `message_delta`
 * (billed just before it), or on its `error` event when it fails once open.
 */
export function messagesFace(maxTokens: number): HostedFace {
  return {
    answerShape(model) {
      const id = newId('msg_');
      let evidence: EvidenceFields | undefined;
      const stream = new MessagesStream(id, model, maxTokens, (error) => ({ ...hostedAnthropicErrorBody(error), ...evidence }));
      return {
        stream,
        whole: (result, fields) => ({ ...anthropicMessage(id, model, result, stopCap(result, maxTokens)), ...fields }),
        settle: (result) => stream.settle(result, stopCap(result, maxTokens)),
        evidenceOnError: (fields) => {
          evidence = fields;
        },
      };
    },
    replayStream: storedMessageEvents,
  };
}
