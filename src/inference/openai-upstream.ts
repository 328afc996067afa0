import type { Socket } from 'node:net';
import { Agent, buildConnector, request, type Dispatcher } from 'undici';
import { ApiError } from '../shared/api-error.ts';
import type { Secret } from '../shared/secret.ts';
import type {
  ChatMessage,
  ChatOptions,
  EmbedResult,
  GenerateOptions,
  GenerateResult,
  LanguageModel,
  SamplingOptions,
} from './language-model.ts';
import { checkUpstreamReply, upstreamExpectation } from './check-upstream-reply.ts';
import { malformedUpstream, upstreamHttpError, upstreamNetworkError, type UpstreamErrorContext } from './upstream-errors.ts';
import { upstreamEmbeddingsSchema, upstreamErrorBodySchema, upstreamModelListSchema, upstreamWholeAnswerSchema } from './upstream-schemas.ts';
import { readUpstreamStream, UpstreamStreamNormalizer, type StreamKind } from './upstream-stream.ts';

/**
 * One OpenAI-compatible upstream (Ollama, vLLM, llama-server, SGLang, a hosted API) and its
 * models as `LanguageModel`s, beside the llama.cpp engine. A library: no HTTP server in it,
 * so the hosted tier can route over the same interface.
 *
 * Every generation is requested as a stream (with usage), whether or not the client streams:
 * the first-byte timeout then bounds the wait for the first token rather than a whole reply,
 * a client that leaves stops the upstream at once, and one normalizer reads every answer.
 */
export type UpstreamKind = 'local' | 'remote';

export interface UpstreamOptions {
  /** Name in model ids (`<name>/<model>`) and messages. */
  name: string;
  /** What an OpenAI client takes as `baseURL`, e.g. `http://127.0.0.1:11434/v1`. */
  baseUrl: string;
  /** `local`: on this machine (loopback); `remote`: its connections count as outbound. */
  kind: UpstreamKind;
  /** The key, already read from the environment; never logged, never in a message. */
  apiKey?: Secret | undefined;
  /** The environment variable the key came from (named in hints). */
  apiKeyEnv?: string | undefined;
  /** Time to establish a connection (TCP and TLS), ms. */
  connectTimeoutMs: number;
  /** Longest silence before the answer starts, and between its chunks, ms. */
  firstByteTimeoutMs: number;
  /** Extra request headers (not secret: they may be shown in configuration dumps). */
  headers?: Readonly<Record<string, string>> | undefined;
  /** Told of each socket opened to this upstream, once connected. */
  onSocket?: ((socket: Socket) => void) | undefined;
}

export interface UpstreamModelInfo {
  /** The upstream's own id. */
  id: string;
  /** Unix seconds, when the upstream says. */
  created?: number | undefined;
}

/** The most bytes of an error body read (a proxy's HTML page can be large). */
const MAX_ERROR_BODY = 64 * 1024;
/** The largest non-streamed body accepted (embeddings of many long vectors). */
const MAX_JSON_BODY = 512 * 1024 * 1024;

async function readText(body: Dispatcher.ResponseData['body'], limit: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) {
      chunks.push(chunk.subarray(0, chunk.length - (size - limit)));
      body.destroy();
      break;
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function isJson(headers: Dispatcher.ResponseData['headers']): boolean {
  const type = headers['content-type'];
  return /\bjson\b/i.test(Array.isArray(type) ? type.join(',') : (type ?? ''));
}

export class OpenAIUpstream {
  readonly name: string;
  readonly kind: UpstreamKind;
  readonly baseUrl: string;
  readonly #options: UpstreamOptions;
  readonly #agent: Agent;
  readonly #errors: UpstreamErrorContext;
  #connections = 0;
  #active = 0;
  #reachable: boolean | undefined;

  constructor(options: UpstreamOptions) {
    this.name = options.name;
    this.kind = options.kind;
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.#options = options;
    this.#errors = { name: options.name, apiKeyEnv: options.apiKeyEnv, secrets: options.apiKey !== undefined ? [options.apiKey.reveal()] : [] };
    const connect = buildConnector({ timeout: options.connectTimeoutMs });
    this.#agent = new Agent({
      // Counts open sockets (live, in use or kept alive) for /health's outbound_connections.
      connect: (opts, callback) => {
        connect(opts, (error, socket) => {
          // undici passes `undefined` (not null) for the side that is absent.
          if (error != null || socket == null) {
            callback(error ?? new Error('no socket'), null);
            return;
          }
          this.#connections++;
          (socket as Socket).once('close', () => this.#connections--);
          options.onSocket?.(socket as Socket);
          callback(null, socket);
        });
      },
      headersTimeout: options.firstByteTimeoutMs,
      bodyTimeout: options.firstByteTimeoutMs,
    });
  }

  /** Open connections to this upstream right now. */
  get connections(): number {
    return this.#connections;
  }

  /** Requests in flight to this upstream. */
  get active(): number {
    return this.#active;
  }

  /** Whether the last attempt reached the upstream; undefined before the first. */
  get reachable(): boolean | undefined {
    return this.#reachable;
  }

  /** What `/health` may show: nothing secret (no key, no headers). */
  describe(): { name: string; kind: UpstreamKind; base_url: string; reachable: boolean | null; connections: number; active: number } {
    return { name: this.name, kind: this.kind, base_url: this.baseUrl, reachable: this.#reachable ?? null, connections: this.#connections, active: this.#active };
  }

  /** `GET /models`: the upstream's model ids. */
  async listModels(signal?: AbortSignal): Promise<UpstreamModelInfo[]> {
    const response = await this.#send('GET', '/models', undefined, signal);
    const body = await this.#json(response);
    const parsed = upstreamModelListSchema.safeParse(body);
    if (!parsed.success) throw malformedUpstream(this.#errors, `its model list does not match the protocol: ${parsed.error.issues[0]?.message ?? 'invalid'}`);
    return parsed.data.data.map((m) => ({ id: m.id, ...(typeof m.created === 'number' ? { created: Math.floor(m.created) } : {}) }));
  }

  /** The upstream model `upstreamId` under the id svc lists it as. */
  model(upstreamId: string, publicId: string): LanguageModel {
    return new UpstreamModel(this, upstreamId, publicId);
  }

  /**
   * A streamed chat request, read into a result (parts go to `onPart`). When the request asks for
   * structured output, the reply is checked before it is returned: the finish of a stream waits
   * for the check, so a broken promise ends it with an error instead (check-upstream-reply.ts).
   */
  async chat(body: Record<string, unknown>, options: ChatOptions): Promise<GenerateResult> {
    const expected = upstreamExpectation(options);
    const result = await this.generate('chat', body, options);
    return expected === undefined ? result : checkUpstreamReply(result, expected, this.#errors);
  }

  /** A streamed chat or completion request, read into a result (parts go to `onPart`). */
  async generate(kind: StreamKind, body: Record<string, unknown>, options: GenerateOptions): Promise<GenerateResult> {
    const normalizer = new UpstreamStreamNormalizer(kind, this.#errors, options.onPart);
    this.#active++;
    try {
      let response;
      try {
        response = await this.#send('POST', kind === 'chat' ? '/chat/completions' : '/completions', body, options.signal);
      } catch (error) {
        if (options.signal?.aborted === true) return normalizer.partial();
        throw error;
      }
      if (isJson(response.headers)) {
        // An upstream that ignored `stream: true` answered whole: the same checks apply.
        let json;
        try {
          json = await this.#json(response);
        } catch (error) {
          if (options.signal?.aborted === true) return normalizer.partial();
          throw error;
        }
        const whole = upstreamWholeAnswerSchema.safeParse(json);
        if (!whole.success) throw malformedUpstream(this.#errors, `its answer does not match the protocol: ${whole.error.issues[0]?.message ?? 'invalid'}`);
        normalizer.chunk({
          usage: whole.data.usage,
          choices: (whole.data.choices ?? []).map((c) => ({
            index: c.index,
            text: c.text,
            finish_reason: c.finish_reason,
            delta: c.message == null ? null : { ...c.message, tool_calls: c.message.tool_calls?.map((t, index) => ({ ...t, index })) },
          })),
        });
        return normalizer.result(true);
      }
      try {
        await readUpstreamStream(response.body as AsyncIterable<Buffer>, normalizer, this.#errors);
      } catch (error) {
        if (options.signal?.aborted === true) return normalizer.partial();
        response.body.destroy();
        const mapped = upstreamNetworkErrorOrSelf(this.#errors, error);
        // Finished, then silent without `[DONE]`: the generation is complete all the same.
        if (mapped.code === 'upstream_timeout' && normalizer.finished) return normalizer.result(true);
        throw mapped;
      }
      // Whatever follows `[DONE]` is read and dropped, so the connection can be reused.
      response.body.dump({ limit: MAX_ERROR_BODY }).catch(() => {});
      return normalizer.result(true);
    } finally {
      this.#active--;
    }
  }

  /** `POST /embeddings`: one vector per input, in input order. */
  async embed(model: string, inputs: readonly (string | readonly number[])[], signal?: AbortSignal): Promise<EmbedResult> {
    this.#active++;
    try {
      const response = await this.#send('POST', '/embeddings', { model, input: inputs, encoding_format: 'float' }, signal);
      const parsed = upstreamEmbeddingsSchema.safeParse(await this.#json(response));
      if (!parsed.success) throw malformedUpstream(this.#errors, `its embeddings do not match the protocol: ${parsed.error.issues[0]?.message ?? 'invalid'}`);
      const data = parsed.data.data.map((d, position) => ({ index: d.index ?? position, embedding: d.embedding }));
      data.sort((a, b) => a.index - b.index);
      if (data.length !== inputs.length || data.some((d, i) => d.index !== i)) {
        throw malformedUpstream(this.#errors, `it returned ${data.length} embeddings for ${inputs.length} inputs`);
      }
      const vectors = data.map((d) => (typeof d.embedding === 'string' ? fromBase64Float32(d.embedding) : d.embedding));
      return { vectors, promptTokens: parsed.data.usage?.prompt_tokens ?? 0 };
    } finally {
      this.#active--;
    }
  }

  /**
   * One request. Resolves with a 2xx response whose body the caller reads; an error status
   * is read, mapped to our envelope and thrown; a transport failure is mapped too.
   */
  async #send(method: 'GET' | 'POST', path: string, body: unknown, signal: AbortSignal | undefined): Promise<Dispatcher.ResponseData> {
    const headers: Record<string, string> = {
      ...this.#options.headers,
      accept: body === undefined ? 'application/json' : 'text/event-stream, application/json',
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...(this.#options.apiKey !== undefined ? { authorization: `Bearer ${this.#options.apiKey.reveal()}` } : {}),
    };
    let response;
    try {
      response = await request(`${this.baseUrl}${path}`, {
        method,
        headers,
        dispatcher: this.#agent,
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
        ...(signal !== undefined ? { signal } : {}),
      });
    } catch (error) {
      if (signal?.aborted === true) throw error;
      const mapped = upstreamNetworkError(this.#errors, error);
      if (mapped.code === 'upstream_unavailable') this.#reachable = false;
      throw mapped;
    }
    this.#reachable = true;
    if (response.statusCode >= 200 && response.statusCode < 300) return response;
    let text = '';
    try {
      text = await readText(response.body, MAX_ERROR_BODY);
    } catch {
      // The status alone still says what happened.
    }
    let parsedBody;
    try {
      parsedBody = upstreamErrorBodySchema.safeParse(JSON.parse(text)).data;
    } catch {
      // A plain-text error (some proxies) is its own message; an HTML page is not worth repeating.
      const type = response.headers['content-type'];
      if (text.trim() !== '' && /text\/plain/i.test(String(type))) parsedBody = { message: text.trim() };
    }
    throw upstreamHttpError(this.#errors, response.statusCode, parsedBody, response.headers['retry-after']);
  }

  async #json(response: Dispatcher.ResponseData): Promise<unknown> {
    let text;
    try {
      text = await readText(response.body, MAX_JSON_BODY);
    } catch (error) {
      throw upstreamNetworkErrorOrSelf(this.#errors, error);
    }
    try {
      return JSON.parse(text);
    } catch {
      throw malformedUpstream(this.#errors, 'its answer is not JSON');
    }
  }

  /** Closes every connection (in-flight requests fail). */
  async close(): Promise<void> {
    await this.#agent.destroy().catch(() => {});
  }
}

function upstreamNetworkErrorOrSelf(ctx: UpstreamErrorContext, error: unknown): ApiError {
  // Our own mapped errors (a malformed chunk, an error event) pass through as they are.
  return error instanceof ApiError ? error : upstreamNetworkError(ctx, error);
}

function fromBase64Float32(text: string): number[] {
  const bytes = Buffer.from(text, 'base64');
  const floats = new Float32Array(bytes.buffer, bytes.byteOffset, Math.floor(bytes.byteLength / 4));
  return Array.from(floats);
}

function samplingFields(options: SamplingOptions): Record<string, unknown> {
  return {
    ...(options.maxTokens !== undefined ? { max_tokens: options.maxTokens } : {}),
    ...(options.temperature !== undefined ? { temperature: options.temperature } : {}),
    ...(options.topP !== undefined ? { top_p: options.topP } : {}),
    ...(options.seed !== undefined ? { seed: options.seed } : {}),
    ...(options.stop !== undefined && options.stop.length > 0 ? { stop: options.stop } : {}),
    ...(options.frequencyPenalty !== undefined ? { frequency_penalty: options.frequencyPenalty } : {}),
    ...(options.presencePenalty !== undefined ? { presence_penalty: options.presencePenalty } : {}),
    // llama.cpp's and Ollama's extensions, under their own names (llama-server, Ollama and
    // vLLM read top_k and min_p; a server that knows none of them answers as it sees fit).
    ...(options.topK !== undefined ? { top_k: options.topK } : {}),
    ...(options.minP !== undefined ? { min_p: options.minP } : {}),
    ...(options.repeatPenalty !== undefined ? { repeat_penalty: options.repeatPenalty } : {}),
    ...(options.repeatLastN !== undefined ? { repeat_last_n: options.repeatLastN } : {}),
    ...(options.typicalP !== undefined ? { typical_p: options.typicalP } : {}),
    ...(options.mirostat !== undefined ? { mirostat: options.mirostat } : {}),
    ...(options.mirostatTau !== undefined ? { mirostat_tau: options.mirostatTau } : {}),
    ...(options.mirostatEta !== undefined ? { mirostat_eta: options.mirostatEta } : {}),
  };
}

/** Engine turns back into OpenAI messages (the upstream renders its own template). */
function toOpenAIMessage(message: ChatMessage): Record<string, unknown> {
  if (message.role === 'tool') return { role: 'tool', content: message.content, tool_call_id: message.toolCallId };
  if (message.role === 'assistant' && (message.toolCalls?.length ?? 0) > 0) {
    return {
      role: 'assistant',
      content: message.content === '' ? null : message.content,
      tool_calls: message.toolCalls!.map((call) => ({ id: call.id, type: 'function', function: { name: call.name, arguments: call.arguments } })),
    };
  }
  return { role: message.role, content: message.content };
}

/** Tools, tool choice and output shape, passed through in OpenAI's form: the upstream enforces them. */
function toolFields(options: ChatOptions): Record<string, unknown> {
  const format = options.responseFormat;
  const choice = options.toolChoice;
  return {
    ...(options.tools !== undefined && options.tools.length > 0
      ? {
          tools: options.tools.map((tool) => ({
            type: 'function',
            function: {
              name: tool.name,
              ...(tool.description !== undefined ? { description: tool.description } : {}),
              ...(tool.parameters !== undefined ? { parameters: tool.parameters } : {}),
              ...(tool.strict !== undefined ? { strict: tool.strict } : {}),
            },
          })),
        }
      : {}),
    ...(choice !== undefined ? { tool_choice: choice.type === 'function' ? { type: 'function', function: { name: choice.name } } : choice.type } : {}),
    ...(options.parallelToolCalls !== undefined ? { parallel_tool_calls: options.parallelToolCalls } : {}),
    ...(format !== undefined && format.type !== 'text'
      ? {
          response_format: format.type === 'json_schema'
            ? { type: 'json_schema', json_schema: { name: format.name, schema: format.schema, strict: format.strict } }
            : { type: format.type },
        }
      : {}),
  };
}

/** A model served by an upstream, listed by svc as `<upstream>/<id>`. */
export class UpstreamModel implements LanguageModel {
  readonly id: string;
  readonly upstreamId: string;
  readonly plane: UpstreamKind;
  readonly #upstream: OpenAIUpstream;

  constructor(upstream: OpenAIUpstream, upstreamId: string, publicId: string) {
    this.#upstream = upstream;
    this.upstreamId = upstreamId;
    this.id = publicId;
    this.plane = upstream.kind;
  }

  chat(messages: readonly ChatMessage[], options: ChatOptions): Promise<GenerateResult> {
    return this.#upstream.chat({
      model: this.upstreamId,
      messages: messages.map(toOpenAIMessage),
      ...samplingFields(options),
      ...toolFields(options),
      stream: true,
      stream_options: { include_usage: true },
    }, options);
  }

  complete(prompt: string, options: GenerateOptions): Promise<GenerateResult> {
    return this.#upstream.generate('completion', {
      model: this.upstreamId,
      prompt,
      ...samplingFields(options),
      stream: true,
      stream_options: { include_usage: true },
    }, options);
  }

  embed(inputs: readonly (string | readonly number[])[], signal?: AbortSignal): Promise<EmbedResult> {
    return this.#upstream.embed(this.upstreamId, inputs, signal);
  }
}
