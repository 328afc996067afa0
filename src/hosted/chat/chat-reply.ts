import type { FastifyReply } from 'fastify';
import type { LedgerEntry } from '../../accounts/ledger-store.ts';
import type { SvcRoute } from '../../accounts/svc-route.ts';
import type { GenerationPart } from '../../inference/language-model.ts';
import { abortOnDisconnect } from '../../http/abort-on-disconnect.ts';
import { openAIFinishReason } from '../../openai/openai-finish-reason.ts';
import { toOpenAIUsage } from '../../openai/openai-usage.ts';
import { StreamWriter } from '../../openai/stream-writer.ts';
import { HostedError } from '../hosted-error.ts';
import type { RouteResult } from '../routing/route-executor.ts';
import type { Charged } from './chat-charge.ts';
import { ledgerUnavailable } from './chat-errors.ts';
import type { AnswerShape, HostedFace } from './hosted-face.ts';
import { isStoredChatResponse, keyReused } from './idempotency.ts';

/**
 * The answer to a retried Idempotency-Key: the stored one (as a stream for a streamed request),
 * or 422 when the key was used for another request.
 */
export function replayStored(reply: FastifyReply, face: HostedFace, entry: LedgerEntry, hash: string, stream: boolean): FastifyReply {
  const stored = entry.response;
  if (!isStoredChatResponse(stored) || stored.request_hash !== hash || stored.stream !== stream) throw keyReused();
  reply.header('idempotent-replayed', 'true');
  reply.header('x-svc-evidence-id', entry.evidenceId);
  if (!stream) return reply.code(200).send(stored.completion);
  const { chunks, doneSentinel } = face.replayStream(stored.completion);
  StreamWriter.replay(reply, chunks, { doneSentinel });
  return reply;
}

/** What a run came to: its result, its signed evidence and the whole answer that carries both. */
export interface ChatAnswer {
  result: RouteResult;
  route: SvcRoute;
  completion: Record<string, unknown>;
}

/**
 * The hosted answer in its face's shape (chat completions' chunks and completion, or Anthropic's
 * events and Message, through the same StreamWriter as the local routes), plus `svc_route` and
 * `svc_outcome`, and the charge placed where each outcome needs it. A stream is billed between
 * its finish and its usage (Anthropic: `message_delta`), so its last chunk carries evidence
 * already stored.
 */
export class HostedChatReply {
  /** Fires when the client leaves before the answer is complete: the run stops. */
  readonly clientGone: AbortSignal;
  readonly #reply: FastifyReply;
  readonly #face: HostedFace;
  readonly #shape: AnswerShape;
  readonly #writer: StreamWriter | undefined;

  constructor(reply: FastifyReply, face: HostedFace, model: string, stream: boolean) {
    this.#reply = reply;
    this.#face = face;
    this.clientGone = abortOnDisconnect(reply);
    this.#shape = face.answerShape(model);
    this.#writer = stream ? new StreamWriter(reply, this.#shape.stream) : undefined;
  }

  /** For the executor: each part as a chunk while the client listens; none for a whole answer. */
  get onPart(): ((part: GenerationPart) => void) | undefined {
    const writer = this.#writer;
    if (writer === undefined) return undefined;
    return (part) => {
      if (!this.clientGone.aborted) writer.part(0, part);
    };
  }

  /** The whole completion of a run, with its evidence (what a stream's parts assemble into). */
  answer(result: RouteResult, route: SvcRoute): ChatAnswer {
    return { result, route, completion: this.#shape.whole(result, { svc_route: route, svc_outcome: result.outcome }) };
  }

  /** Answers for how the run ended; `charge` is called once (it takes over the held Joules). */
  async send(answer: ChatAnswer, hash: string, charge: () => Promise<Charged>): Promise<unknown> {
    const reply = this.#reply;
    const writer = this.#writer;
    const { result, route, completion } = answer;
    this.#shape.settle?.(result);

    if (result.outcome === 'aborted') {
      // Nobody is listening; what ran is still billed.
      await charge().catch(() => undefined);
      if (writer === undefined || !writer.opened) reply.hijack();
      return reply;
    }

    // Failed with nothing sent yet (a non-streamed request, or every backend given up on after one
    // did work): billed for what ran, and an ordinary HTTP error naming its evidence.
    if (writer === undefined || (result.outcome === 'failed' && !writer.opened)) {
      const charged = await charge();
      reply.header('x-svc-evidence-id', charged.entry.evidenceId);
      if (result.outcome === 'failed') {
        throw result.error ?? new HostedError({ status: 502, type: 'server_error', code: 'upstream_unavailable', message: 'The backend failed.' });
      }
      // A twin with the same Idempotency-Key on another replica was billed first: answer as it did.
      if (charged.duplicate) return replayStored(reply, this.#face, charged.entry, hash, false);
      return completion;
    }

    const usage = toOpenAIUsage([result]);
    if (result.outcome === 'failed') {
      // Failed mid-stream: the usage chunk with the evidence of what ran, if it was billed, then the error.
      const extension = await charge().then(() => ({ svc_route: route, svc_outcome: result.outcome }), () => undefined);
      if (extension !== undefined) {
        if (this.#shape.evidenceOnError !== undefined) this.#shape.evidenceOnError(extension);
        else writer.usage(usage, extension);
      }
      writer.error(result.error ?? ledgerUnavailable());
      return reply;
    }
    writer.finish(0, openAIFinishReason(result.finishReason));
    await writer.complete({
      usage,
      includeUsage: true,
      beforeUsage: async () => {
        const charged = await charge();
        // A twin billed first on another replica: the stream names the evidence that was stored.
        const stored = charged.duplicate && isStoredChatResponse(charged.entry.response) ? charged.entry.response.completion.svc_route : route;
        return { svc_route: stored, svc_outcome: result.outcome };
      },
    });
    return reply;
  }
}
