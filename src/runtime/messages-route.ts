import type { FastifyInstance } from 'fastify';
import type { ModelRegistry } from '../inference/language-model.ts';
import { newId } from '../shared/new-id.ts';
import { abortOnDisconnect } from '../http/abort-on-disconnect.ts';
import { lookupModel } from '../openai/model-lookup.ts';
import { runGeneration } from '../openai/generation-run.ts';
import { installAnthropicErrorHandler } from '../anthropic/anthropic-errors.ts';
import { countPromptTokens } from '../anthropic/count-prompt-tokens.ts';
import { anthropicMessage } from '../anthropic/messages-reply.ts';
import { refuseUnsupported, toEngineMessages, toSampling, toToolOptions } from '../anthropic/messages-request.ts';
import { countTokensRequestSchema, messagesRequestSchema } from '../anthropic/messages-schemas.ts';
import { MessagesStream } from '../anthropic/messages-stream.ts';
import { parseWithSchema } from '../shared/parse-with-schema.ts';
import { markedLocalContext } from '../mcp/local-context-marker.ts';
import { localContextInMessages, refuseLocalContext } from './local-context-guard.ts';

export interface MessagesRouteOptions {
  models: ModelRegistry;
  shutdownSignal: AbortSignal;
}

/**
 * Anthropic's Messages API on the local face, mounted at `/v1/messages`: `POST /v1/messages`
 * (whole or streamed) and `POST /v1/messages/count_tokens`, over the same models and engine call
 * as chat completions (anthropic/ translates both ways). Every error on these paths, including
 * the guards' and the body parser's, is answered in Anthropic's envelope. `x-api-key` is read by
 * the developer-key guard like a bearer token; `anthropic-version` is accepted, whatever it says.
 */
export async function messagesRoutes(app: FastifyInstance, options: MessagesRouteOptions): Promise<void> {
  installAnthropicErrorHandler(app);

  app.post('/', { config: { job: 'chat' } }, async (request, reply) => {
    const body = parseWithSchema(messagesRequestSchema, request.body);
    refuseUnsupported(body);
    const messages = toEngineMessages(body);
    const toolOptions = toToolOptions(body);
    const sampling = toSampling(body);
    const model = lookupModel(options.models, body.model);
    request.model = model.id;
    refuseLocalContext(model, () => localContextInMessages(body) ?? markedLocalContext(request.headers));

    const id = newId('msg_');
    const stream = body.stream === true ? new MessagesStream(id, model.id, body.max_tokens) : undefined;
    const results = await runGeneration(
      { reply, shutdownSignal: options.shutdownSignal },
      1,
      (_index, run) => model.chat(messages, {
        ...sampling, ...toolOptions, ...run,
        ...(stream !== undefined ? { onPromptTokens: (tokens: number) => { stream.promptCounted(tokens); return undefined; } } : {}),
      }).then((result) => {
        // Before the writer finishes the stream: message_delta names how the reply ended.
        stream?.settle(result);
        return result;
      }),
      stream !== undefined ? { includeUsage: true, shape: stream } : undefined,
    );
    if (results === undefined) return reply;
    return anthropicMessage(id, model.id, results[0]!, body.max_tokens);
  });

  app.post('/count_tokens', async (request, reply) => {
    const body = parseWithSchema(countTokensRequestSchema, request.body);
    const messages = toEngineMessages(body);
    const toolOptions = toToolOptions(body);
    const model = lookupModel(options.models, body.model);
    request.model = model.id;
    // An upstream counts by answering one token: the same rule as generating.
    refuseLocalContext(model, () => localContextInMessages(body) ?? markedLocalContext(request.headers));
    const signal = AbortSignal.any([abortOnDisconnect(reply), options.shutdownSignal]);
    return { input_tokens: await countPromptTokens(model, messages, { ...toolOptions, signal }) };
  });
}
