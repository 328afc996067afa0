import type { FastifyBaseLogger } from 'fastify';
import type { WebSocket } from 'ws';
import type { ChatMessage, GenerateResult, GenerationPart, ModelRegistry } from '../inference/language-model.ts';
import { toApiError } from '../http/openai-error-handler.ts';
import { lookupModel } from '../openai/model-lookup.ts';
import { openAIFinishReason } from '../openai/openai-finish-reason.ts';
import { responseRequestSchema } from '../openai/openai-schemas.ts';
import { toOpenAIUsage } from '../openai/openai-usage.ts';
import { ResponseBuilder } from '../openai/response-builder.ts';
import type { ResponseStore } from '../openai/response-store.ts';
import { previousResponseNotFound, ResponsesMemory } from '../openai/responses-memory.ts';
import { refuseStateful, toInputMessages, toResponseOptions, toResponseSettings, toResponsesError } from '../openai/responses-request.ts';
import { samplingFrom } from '../openai/sampling-from.ts';
import { keepResponse, recallStored } from '../openai/stored-conversation.ts';
import type { SseEvents } from '../openai/stream-shape.ts';
import { ApiError } from '../shared/api-error.ts';
import { parseWithSchema } from '../shared/parse-with-schema.ts';
import { quoteInput } from '../shared/quote-input.ts';
import { localContextInHistory, localContextInResponse, refuseLocalContext } from './local-context-guard.ts';

/** Open Responses limits a WebSocket connection to 60 minutes. */
export const CONNECTION_LIMIT_MS = 60 * 60 * 1000;

/** `response.create` messages a connection may have waiting behind the one being answered. */
export const MAX_PENDING_TURNS = 8;

export interface ResponsesSocketOptions {
  models: ModelRegistry;
  /** Aborts when the daemon shuts down: the turn in progress fails, the connection closes. */
  shutdownSignal: AbortSignal;
  connectionLimitMs?: number | undefined;
  log: FastifyBaseLogger;
  /** The responses store: `store: true` (the default with one) responses are kept there too, and found by any connection. */
  store?: ResponseStore | undefined;
}

/** Fields of HTTP streaming that Open Responses forbids in a WebSocket `response.create`. */
const HTTP_ONLY_FIELDS = ['stream', 'stream_options', 'background'] as const;

function refuseHttpOnly(event: Record<string, unknown>): void {
  for (const field of HTTP_ONLY_FIELDS) {
    if (Object.hasOwn(event, field)) {
      throw ApiError.invalidRequest(`${field} is an HTTP field: a WebSocket response.create streams its events on the connection and must not send it.`, field);
    }
  }
}

/** The `response.create` in a message: a JSON object with that `type`; 400 for anything else. */
function createEvent(data: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(data);
  } catch {
    throw ApiError.invalidRequest('The message is not JSON: send {"type": "response.create", ...} as a JSON text message.', null, 'invalid_json');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw ApiError.invalidRequest('The message is not a JSON object: send {"type": "response.create", ...}.', 'type');
  }
  const event = parsed as Record<string, unknown>;
  if (event.type !== 'response.create') {
    const sent = typeof event.type === 'string' ? quoteInput(event.type) : 'none';
    throw ApiError.invalidRequest(`Unknown client event type ${sent}: the only client event of /v1/responses is response.create.`, 'type', 'unknown_event_type');
  }
  return event;
}

/**
 * One WebSocket connection to `/v1/responses` (Open Responses' WebSocket mode). Each text message
 * is a `response.create`; turns are answered one at a time, in order, with the events streaming
 * HTTP sends (ResponseBuilder), one JSON object per message. A failure before a response exists
 * (bad message, unknown model, `previous_response_not_found`) is the spec's error envelope
 * `{type: "error", status, error: {type, code, message, param}}`; once a response is under way
 * its failure is its `response.failed` event, so each turn ends with exactly one terminal message.
 * Closing the connection aborts the generation in progress.
 */
export class ResponsesSocketSession {
  readonly #socket: WebSocket;
  readonly #options: ResponsesSocketOptions;
  readonly #memory = new ResponsesMemory();
  readonly #pending: string[] = [];
  #busy = false;
  #closing = false;
  #turn: AbortController | undefined;
  readonly #limit: NodeJS.Timeout;
  #limitReached = false;

  constructor(socket: WebSocket, options: ResponsesSocketOptions) {
    this.#socket = socket;
    this.#options = options;
    socket.on('message', (data, isBinary) => this.#receive(data, isBinary));
    socket.on('close', () => this.#closed());
    this.#limit = setTimeout(() => this.#reachLimit(), options.connectionLimitMs ?? CONNECTION_LIMIT_MS).unref();
    options.shutdownSignal.addEventListener('abort', this.#onShutdown, { once: true });
  }

  readonly #onShutdown = (): void => {
    // The turn in progress ends with its failure (#runTurn); an idle connection closes now.
    this.#turn?.abort();
    this.close(1001, 'server shutting down');
  };

  /** Closes once the turn in progress (if any) has ended; later messages are not answered. */
  close(code: number, reason: string): void {
    this.#closing = true;
    this.#pending.length = 0;
    if (!this.#busy && this.#socket.readyState === this.#socket.OPEN) this.#socket.close(code, reason);
  }

  #send(message: unknown): void {
    if (this.#socket.readyState === this.#socket.OPEN) this.#socket.send(JSON.stringify(message));
  }

  #sendEvents(events: SseEvents, skip?: string): void {
    for (const e of events.events) if (e.event !== skip) this.#send(e.data);
  }

  #sendError(error: ApiError): void {
    this.#send({ type: 'error', status: error.status, error: { type: error.type, code: error.code, message: error.message, param: error.param } });
  }

  #receive(data: unknown, isBinary: boolean): void {
    if (this.#closing) return;
    if (isBinary) {
      this.#sendError(ApiError.invalidRequest('Binary messages are not read: send response.create as a JSON text message.', null, 'invalid_message'));
      return;
    }
    if (this.#pending.length >= MAX_PENDING_TURNS) {
      this.#sendError(ApiError.busy(`${MAX_PENDING_TURNS} response.create messages are already waiting on this connection; wait for a response to end, or open another connection.`, 1, 429, 'too_many_pending_turns'));
      return;
    }
    this.#pending.push(Buffer.isBuffer(data) ? data.toString('utf8') : Buffer.concat(data as Buffer[]).toString('utf8'));
    void this.#pump();
  }

  async #pump(): Promise<void> {
    if (this.#busy) return;
    this.#busy = true;
    try {
      for (let next = this.#pending.shift(); next !== undefined; next = this.#pending.shift()) {
        if (this.#limitReached || this.#closing) break;
        await this.#runTurn(next);
      }
    } finally {
      this.#busy = false;
    }
    if (this.#limitReached) this.#endForLimit();
    else if (this.#closing) this.close(1001, 'server shutting down');
  }

  #reachLimit(): void {
    this.#limitReached = true;
    if (!this.#busy) this.#endForLimit();
  }

  #endForLimit(): void {
    if (this.#socket.readyState !== this.#socket.OPEN) return;
    const minutes = Math.round((this.#options.connectionLimitMs ?? CONNECTION_LIMIT_MS) / 60_000);
    this.#sendError(ApiError.invalidRequest(`This WebSocket connection reached its ${minutes}-minute limit; open a new connection (continue with the whole conversation, or a compacted one, in input).`, null, 'websocket_connection_limit_reached'));
    this.close(1000, 'connection limit reached');
  }

  #closed(): void {
    this.#closing = true;
    this.#pending.length = 0;
    this.#turn?.abort();
    clearTimeout(this.#limit);
    this.#options.shutdownSignal.removeEventListener('abort', this.#onShutdown);
  }

  /**
   * The conversation a continuation replays: this connection's memory first (every response it
   * made, stored or not), then the responses store (a stored response of any connection or HTTP).
   */
  #recall(id: string): readonly ChatMessage[] {
    const remembered = this.#memory.find(id);
    if (remembered !== undefined) return remembered;
    if (this.#options.store === undefined) throw previousResponseNotFound(id);
    return recallStored(this.#options.store, id);
  }

  async #runTurn(data: string): Promise<void> {
    let previousId: string | undefined;
    let response: ResponseBuilder | undefined;
    let opened = false;
    const turn = new AbortController();
    this.#turn = turn;
    try {
      const event = createEvent(data);
      refuseHttpOnly(event);
      const { type: _type, ...fields } = event;
      const body = parseWithSchema(responseRequestSchema, fields);
      const store = this.#options.store;
      refuseStateful(body, 'websocket', store !== undefined);
      previousId = body.previous_response_id ?? undefined;
      const history = previousId === undefined ? [] : this.#recall(previousId);
      const conversation = toInputMessages(body.input, history);
      const instructions: ChatMessage[] = body.instructions != null && body.instructions !== '' ? [{ role: 'system', content: body.instructions }] : [];
      const chatOptions = toResponseOptions(body);
      const model = lookupModel(this.#options.models, body.model);
      refuseLocalContext(model, () => localContextInResponse(body) ?? localContextInHistory(history));
      const sampling = samplingFrom(body, body.max_output_tokens);
      const keep = store !== undefined && body.store !== false
        ? keepResponse(store, body.input, previousId ?? null, (error) => this.#options.log.error({ err: error }, 'could not store the response'))
        : undefined;
      const builder = new ResponseBuilder(toResponseSettings(body, model, sampling, keep !== undefined), keep);
      response = builder;
      const shape = builder.streamShape();
      // Opened on the first event, so an error the engine raises before generating (a prompt
      // over the context) is still the error envelope, as it would be an HTTP status.
      const open = (): void => {
        if (opened) return;
        opened = true;
        this.#sendEvents(shape.start!(0) as SseEvents);
      };
      const onPart = (part: GenerationPart): void => {
        if (part.type === 'text-delta' && part.text === '') return;
        open();
        this.#sendEvents(shape.part(0, part) as SseEvents);
      };
      const signal = AbortSignal.any([turn.signal, this.#options.shutdownSignal]);
      const result: GenerateResult = await model.chat([...instructions, ...conversation], { ...sampling, ...chatOptions, signal, onPart }).catch((error: unknown) => {
        throw toResponsesError(error);
      });
      if (result.finishReason === 'abort') {
        if (this.#options.shutdownSignal.aborted) throw shutdownError();
        return;
      }
      open();
      this.#sendEvents(shape.finish(0, openAIFinishReason(result.finishReason)) as SseEvents);
      this.#sendEvents(shape.usage(toOpenAIUsage([result])) as SseEvents);
      this.#memory.remember(builder.id, [...conversation, { role: 'assistant', content: result.text, toolCalls: result.toolCalls.length > 0 ? result.toolCalls : undefined }]);
    } catch (error) {
      // Open Responses: a failed continuation forgets the response it continued.
      if (previousId !== undefined) this.#memory.forget(previousId);
      if (turn.signal.aborted && !this.#options.shutdownSignal.aborted) return;
      const apiError = this.#options.shutdownSignal.aborted ? shutdownError() : toApiError(error);
      if (apiError.status === 500) this.#options.log.error({ err: error }, 'WebSocket response failed');
      // The response already streamed ends with response.failed alone (the HTTP stream's `error`
      // event before it would be read as the next turn's answer).
      if (response !== undefined && opened) this.#sendEvents(response.streamShape().error!(apiError) as SseEvents, 'error');
      else this.#sendError(apiError);
    } finally {
      this.#turn = undefined;
    }
  }
}

function shutdownError(): ApiError {
  return new ApiError({
    status: 503, type: 'server_error', code: 'server_shutting_down',
    message: 'The daemon is shutting down; the generation was stopped.', retryAfterSeconds: 1,
  });
}
