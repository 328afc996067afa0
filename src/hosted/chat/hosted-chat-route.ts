import type { FastifyReply, FastifyRequest } from 'fastify';
import type { GenerationPart } from '../../inference/language-model.ts';
import { deltaOf, messageOf } from '../../openai/chat-response.ts';
import { refuseUnsupported } from '../../openai/chat-request.ts';
import { toChatMessages, toChatOptions } from '../../openai/chat-request.ts';
import { openAIFinishReason } from '../../openai/openai-finish-reason.ts';
import { chatCompletionRequestSchema } from '../../openai/openai-schemas.ts';
import { requestBody } from '../../openai/request-body.ts';
import { ValidatedBody } from '../../http/validated-body.ts';
import { samplingFrom } from '../../openai/sampling-from.ts';
import { LazySseStream } from '../../http/sse-stream.ts';
import { ApiError } from '../../shared/api-error.ts';
import { linkedAbort } from '../../shared/linked-abort.ts';
import { newId, newTimeOrderedId } from '../../shared/new-id.ts';
import type { HostedPlugin } from '../hosted-plugin.ts';
import { HostedError, hostedErrorBody, toHostedError } from '../hosted-error.ts';
import type { Allowance, HostedStore, JouleReservation, LedgerEntry, SvcRoute } from '../../accounts/account-store.ts';
import { promptTokenBound, reservationJoules } from '../routing/energy.ts';
import { RouteRefusedError } from '../routing/route-refused-error.ts';
import type { QueueClass } from '../route-config.ts';
import { parseRouteHeaders } from '../routing/route-headers.ts';
import { planRoute, type RoutePlan } from '../routing/route-planner.ts';
import type { RouteExecutor, RouteResult } from '../routing/route-executor.ts';
import { rateLimitHeaders, upstreamUnavailableHeaders } from '../../accounts/limits/rate-limit-headers.ts';
import { RateLimitedError } from '../../accounts/limits/rate-limited-error.ts';
import type { BackpressureState, RateLimiter } from '../../accounts/limits/rate-limiter.ts';
import { idempotencyKeyOf, InFlightKeys, isStoredChatResponse, keyInProgress, keyReused, requestHash, type StoredChatResponse } from './idempotency.ts';
import { requireHostedEntitlement } from '../require-key.ts';

export interface HostedChatOptions {
  executor: RouteExecutor;
  /** The backstop limiter, per key, account and queue class; none: no rate refusals (tests of other things). */
  limiter?: RateLimiter | undefined;
  /** Aborted when shutdown's grace period ends: running generations stop, billed, with a 503 error. */
  shutdownSignal?: AbortSignal | undefined;
  /** Signs each `svc_route` (an ML-DSA transport identity); none: evidence goes unsigned. */
  signEvidence?: ((route: SvcRoute) => SvcRoute) | undefined;
}

const SYSTEM_FINGERPRINT = 'svc-hosted';

function allowanceExhausted(allowance: Allowance, why: string): HostedError {
  return new HostedError({
    status: 402, type: 'insufficient_quota', code: 'joule_allowance_exhausted',
    message: `This account's Joule allowance for ${allowance.month}: ${why} (${allowance.usedJoules} of ${allowance.allowanceJoules} J used); nothing was run.`,
  });
}

function shuttingDown(): HostedError {
  return new HostedError({ status: 503, type: 'server_error', code: 'server_shutting_down', message: 'The server is shutting down: this generation was stopped and what ran is billed. Retry the request.', retryAfterSeconds: 1 });
}

export function ledgerUnavailable(): HostedError {
  return new HostedError({ status: 503, type: 'server_error', code: 'ledger_unavailable', message: 'The usage ledger is unavailable right now; nothing was run or billed. Retry later.', retryAfterSeconds: 1 });
}

/** The backpressure a request's limiter decision reported, for its 502/503 headers. */
const BACKPRESSURE = Symbol('svc.backpressure');
type WithBackpressure = FastifyRequest & { [BACKPRESSURE]?: BackpressureState };

/** A stored completion as SSE chunks, for a streamed request replayed by its Idempotency-Key. */
function replayChunks(completion: Record<string, unknown>): unknown[] {
  const head = { id: completion.id, created: completion.created, model: completion.model, system_fingerprint: completion.system_fingerprint, object: 'chat.completion.chunk' };
  const choice = (completion.choices as { message: { content: string | null; tool_calls?: { id: string; type: string; function: { name: string; arguments: string } }[] }; finish_reason: string }[])[0]!;
  const chunks: unknown[] = [{ ...head, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null }] }];
  if (choice.message.content !== null && choice.message.content !== '') {
    chunks.push({ ...head, choices: [{ index: 0, delta: { content: choice.message.content }, logprobs: null, finish_reason: null }] });
  }
  for (const [index, call] of (choice.message.tool_calls ?? []).entries()) {
    chunks.push({ ...head, choices: [{ index: 0, delta: { tool_calls: [{ index, id: call.id, type: 'function', function: call.function }] }, logprobs: null, finish_reason: null }] });
  }
  chunks.push({ ...head, choices: [{ index: 0, delta: {}, logprobs: null, finish_reason: choice.finish_reason }] });
  chunks.push({ ...head, choices: [], usage: completion.usage, svc_route: completion.svc_route, svc_outcome: completion.svc_outcome });
  return chunks;
}

/** The answer to a retried Idempotency-Key: the stored one, or 422 when the key was used for another request. */
function replay(reply: FastifyReply, entry: LedgerEntry, hash: string, stream: boolean): FastifyReply {
  const stored = entry.response;
  if (!isStoredChatResponse(stored) || stored.request_hash !== hash || stored.stream !== stream) throw keyReused();
  reply.header('idempotent-replayed', 'true');
  reply.header('x-svc-evidence-id', entry.evidenceId);
  if (!stream) return reply.code(200).send(stored.completion);
  const sse = new LazySseStream(reply);
  for (const chunk of replayChunks(stored.completion)) sse.send(chunk);
  sse.done();
  return reply;
}

interface Charge {
  store: HostedStore;
  request: FastifyRequest;
  result: RouteResult;
  projectId: string | undefined;
  idempotencyKey: string | undefined;
  completion: Record<string, unknown>;
  hash: string;
  stream: boolean;
  /** No other chat request is in flight here (ChargeInput's `alone`). */
  alone: boolean;
  /** Given back by the store once the row is stored (or storing failed). */
  reservation: JouleReservation;
}

/**
 * One ledger row per run that did work. Only a run that finished (completed, or stopped at the
 * Joule ceiling) binds its Idempotency-Key: a failed or abandoned run is billed for what ran
 * but leaves the key free, so the client's retry runs again.
 */
async function charge(c: Charge): Promise<{ entry: LedgerEntry; duplicate: boolean }> {
  const identity = c.request.hostedIdentity!;
  const binds = c.result.outcome === 'completed' || c.result.outcome === 'stopped_at_joule_ceiling';
  const route = c.completion.svc_route as SvcRoute;
  // The answer is kept only where a retry may need it back (a run that binds its
  // Idempotency-Key): evidence is about routes and Joules, not what the model said.
  const idempotencyKey = binds ? (c.idempotencyKey ?? null) : null;
  const response: StoredChatResponse | null = idempotencyKey === null ? null : { request_hash: c.hash, stream: c.stream, completion: c.completion };
  try {
    const result = await c.store.recordCharge({
      evidenceId: route.evidence_id,
      accountId: identity.account.id,
      keyId: identity.key.id,
      projectId: c.projectId ?? null,
      idempotencyKey,
      route,
      promptTokens: c.result.usage.promptTokens,
      completionTokens: c.result.usage.completionTokens,
      outcome: c.result.outcome,
      response,
      alone: c.alone,
      reservation: c.reservation,
    });
    return { entry: result.entry, duplicate: result.status === 'duplicate' };
  } catch (error) {
    c.request.log.error({ err: error }, 'recording a hosted charge failed');
    throw ledgerUnavailable();
  }
}

/**
 * `POST /chat/completions` on the hosted tier: the local route's request shape and chunks, plus
 * entitlement, route planning, the Joule allowance, the backstop limiter, execution over the
 * planned backends and exactly one ledger row (with its evidence) before the answer completes.
 */
export function hostedChatPlugin(options: HostedChatOptions): HostedPlugin {
  const inFlight = new InFlightKeys();
  /** Chat requests being handled right now (the ledger write is cheaper inline when alone). */
  let running = 0;
  return async (scope, context) => {
    const { store, routes } = context;
    const defaultClass: QueueClass = routes.routes.find((r) => r.policy === routes.default_policy)?.queue_class ?? 'interactive';

    // Every answer names its queue class: the default policy's until the request is planned.
    scope.addHook('onRequest', async (_request, reply) => {
      reply.header('x-svc-queue-class', defaultClass);
    });
    // 502/503 carry the same headers as a 429 (the contract's "rate limits or upstream unavailability").
    scope.addHook('onError', async (request, reply, error) => {
      const apiError = toHostedError(error);
      if (apiError.status !== 502 && apiError.status !== 503) return;
      const queueClass = (reply.getHeader('x-svc-queue-class') as QueueClass | undefined) ?? defaultClass;
      reply.headers(upstreamUnavailableHeaders({ queueClass, backpressure: (request as WithBackpressure)[BACKPRESSURE] ?? 'normal', retryAfterSeconds: apiError.retryAfterSeconds }));
    });

    /**
     * The request's route plan, made before anything about the request is checked so that its
     * limiter take names its queue class; undefined for a request that will be refused (bad body,
     * bad header, unknown model), which takes from the default class's bucket and is refused in
     * order later. `run` uses it rather than planning again.
     */
    const earlyPlan = (request: FastifyRequest, rawBody: unknown): RoutePlan | undefined => {
      const model = typeof rawBody === 'object' && rawBody !== null && Object.hasOwn(rawBody, 'model') ? (rawBody as { model: unknown }).model : undefined;
      if (typeof model !== 'string') return undefined;
      try {
        const headers = parseRouteHeaders(request.headers);
        return planRoute(routes, { model, policy: headers.policy, privacyTier: headers.privacyTier, plan: request.hostedIdentity!.account.plan });
      } catch {
        return undefined;
      }
    };

    // The key alone: the backstop take comes first in the handler, with the request's queue class.
    scope.post('/chat/completions', { preHandler: context.authenticateKey }, async (request, reply) => {
      const identity = request.hostedIdentity!;
      const rawBody = request.body instanceof ValidatedBody ? request.body.value : request.body;

      // Every request that reaches the route takes from the limiter before anything else: refusals
      // (402, 400, 409, 422) and idempotent replays cost a take like any answer, so none of them
      // is a way around the limits.
      const planned = options.limiter === undefined ? undefined : earlyPlan(request, rawBody);
      if (options.limiter !== undefined) {
        const queueClass = planned?.queueClass ?? defaultClass;
        reply.header('x-svc-queue-class', queueClass);
        const decision = await options.limiter.take({ keyId: identity.key.id, accountId: identity.account.id, queueClass });
        if (!decision.allowed) throw new RateLimitedError(decision);
        (request as WithBackpressure)[BACKPRESSURE] = decision.backpressure;
        reply.headers(rateLimitHeaders(decision));
      } else {
        reply.header('x-svc-backpressure-state', 'normal');
      }
      requireHostedEntitlement(identity);

      const body = requestBody(chatCompletionRequestSchema, request.body);
      refuseUnsupported(body);
      if (body.spaces != null || body.retrieval != null) {
        throw ApiError.unsupported(body.spaces != null ? 'spaces' : 'retrieval', 'Knowledge spaces live on your machine: send spaces to the local daemon (svc serve), not to the hosted tier.');
      }
      const messages = toChatMessages(body.messages);
      const chatOptions = toChatOptions(body);
      const headers = parseRouteHeaders(request.headers);
      const idempotencyKey = idempotencyKeyOf(request.headers['idempotency-key']);
      const stream = body.stream === true;
      // Only a request with an Idempotency-Key is ever compared with another (replay, duplicate).
      const hash = idempotencyKey === undefined ? '' : requestHash(rawBody, { ...headers });

      let release: (() => void) | undefined;
      if (idempotencyKey !== undefined) {
        const previous = await store.findByIdempotencyKey(identity.account.id, idempotencyKey).catch(() => {
          throw ledgerUnavailable();
        });
        if (previous !== undefined) return replay(reply, previous, hash, stream);
        release = inFlight.claim(identity.account.id, idempotencyKey);
        if (release === undefined) throw keyInProgress();
      }
      running++;
      try {
        return await run(request, reply, { messages, chatOptions, headers, idempotencyKey, stream, hash, body, planned });
      } finally {
        running--;
        release?.();
      }
    });

    type RunInput = {
      messages: ReturnType<typeof toChatMessages>;
      chatOptions: ReturnType<typeof toChatOptions>;
      headers: ReturnType<typeof parseRouteHeaders>;
      idempotencyKey: string | undefined;
      stream: boolean;
      hash: string;
      body: ReturnType<typeof chatCompletionRequestSchema.parse>;
      /** The plan made for the limiter take, if one was (for this same model and headers). */
      planned: RoutePlan | undefined;
    };

    async function run(request: FastifyRequest, reply: FastifyReply, input: RunInput): Promise<unknown> {
      const identity = request.hostedIdentity!;
      const { headers, body } = input;
      const plan = input.planned?.model === body.model ? input.planned : planRoute(routes, { model: body.model, policy: headers.policy, privacyTier: headers.privacyTier, plan: identity.account.plan });
      reply.header('x-svc-queue-class', plan.queueClass);

      // Read with the key, a moment ago: a spent allowance is refused without a reservation.
      if (identity.allowance.remainingJoules <= 0) throw allowanceExhausted(identity.allowance, 'it is used up');
      const maxTokens = body.max_completion_tokens ?? body.max_tokens ?? undefined;
      const sampling = { ...samplingFrom(body, maxTokens), ...input.chatOptions };
      // x-svc-max-joules: 0 fits nothing, whatever the prompt: refused as the executor would, before a reservation.
      if (headers.maxJoules === 0) throw new RouteRefusedError('joule_ceiling_too_low', 'x-svc-max-joules 0 cannot cover any request: its prompt and one completion token cost more. Nothing was run.', 'x-svc-max-joules');
      // The request's Joules are held before it runs, atomically with every other request of the
      // account (on every replica): concurrent requests cannot each spend what is left. What it holds
      // is its ceiling: x-svc-max-joules, or what its prompt bound, max_tokens and load can cost;
      // never more than the whole allowance (no grant could be larger, and a ceiling of 10^14 J is
      // a valid header, not a number the store should see).
      const ceiling = headers.maxJoules ?? reservationJoules(plan.candidates.map((c) => c.backend.energy), promptTokenBound(input.messages, sampling), maxTokens);
      const wanted = Math.min(ceiling, identity.allowance.allowanceJoules);
      let reserved;
      try {
        reserved = await store.reserveJoules({ accountId: identity.account.id, joules: wanted, seen: identity.allowance });
      } catch (error) {
        request.log.error({ err: error }, 'reserving Joules failed: the hosted store did not answer');
        throw ledgerUnavailable();
      }
      const { reservation, allowance } = reserved;
      if (reservation === undefined) {
        throw allowanceExhausted(allowance, allowance.usedJoules >= allowance.allowanceJoules ? 'it is used up' : 'what is left is held by this account\'s requests running now');
      }
      let charging = false;
      try {
        return await runReserved(request, reply, input, plan, sampling, reservation, allowance, ceiling, () => { charging = true; });
      } finally {
        // A request that never reached its charge gives its Joules back (a charge gives them back itself).
        if (!charging) await store.releaseReservation(reservation).catch((error: unknown) => request.log.error({ err: error }, 'releasing a Joule reservation failed'));
      }
    }

    async function runReserved(
      request: FastifyRequest, reply: FastifyReply, input: RunInput, plan: RoutePlan, sampling: ReturnType<typeof samplingFrom>,
      reservation: JouleReservation, allowance: Allowance, ceiling: number, charging: () => void,
    ): Promise<unknown> {
      const identity = request.hostedIdentity!;
      const { headers, stream } = input;

      const controller = new AbortController();
      reply.raw.once('close', () => {
        if (!reply.raw.writableFinished) controller.abort(new Error('client disconnected'));
      });
      const id = newId('chatcmpl-');
      const created = Math.floor(Date.now() / 1000);
      const head = { id, created, model: plan.model, system_fingerprint: SYSTEM_FINGERPRINT };
      const chunk = (choice: object) => ({ ...head, object: 'chat.completion.chunk', choices: [{ index: 0, logprobs: null, finish_reason: null, ...choice }] });
      const sse = stream ? new LazySseStream(reply) : undefined;
      let opened = false;
      const open = (): void => {
        if (sse === undefined || opened) return;
        opened = true;
        sse.send(chunk({ delta: { role: 'assistant', content: '' } }));
      };
      const onPart = sse === undefined
        ? undefined
        : (part: GenerationPart): void => {
            if (part.type === 'text-delta' && part.text === '') return;
            if (controller.signal.aborted) return;
            open();
            sse.send(chunk({ delta: deltaOf(part) }));
          };

      const { shutdownSignal } = options;
      // The reservation is the ceiling: the request stops before a token would cross it. It binds
      // (rather than x-svc-max-joules) when less was free than the request asked for.
      const allowanceBinds = reservation.joules < ceiling;
      const maxJoules = reservation.joules;
      // The run stops when the client leaves or when shutdown's grace period ends.
      const runAbort = linkedAbort([controller.signal, shutdownSignal]);
      let result: RouteResult;
      try {
        result = await options.executor.execute({
          plan,
          messages: input.messages,
          options: sampling,
          maxJoules,
          maxLatencyMs: headers.maxLatencyMs,
          startedAt: performance.now() - reply.elapsedTime,
          signal: runAbort.signal,
          onPart,
        });
      } catch (error) {
        if (allowanceBinds && error instanceof RouteRefusedError && error.code === 'joule_ceiling_too_low') {
          throw allowanceExhausted(allowance, 'what is left cannot cover this request\'s prompt and one completion token');
        }
        throw error;
      } finally {
        runAbort.release();
      }
      // Stopped by shutdown while the client still listens: it failed, and is told so.
      if (result.outcome === 'aborted' && !controller.signal.aborted && shutdownSignal?.aborted === true) {
        result = { ...result, outcome: 'failed', error: shuttingDown() };
      }

      // The key that ran it is part of what is signed: evidence names who it bills.
      const unsigned: SvcRoute = { ...result.route, key_id: identity.key.id, evidence_id: newTimeOrderedId('ev_') };
      const svcRoute = options.signEvidence?.(unsigned) ?? unsigned;
      const usage = { prompt_tokens: result.usage.promptTokens, completion_tokens: result.usage.completionTokens, total_tokens: result.usage.promptTokens + result.usage.completionTokens };
      const finishReason = openAIFinishReason(result.finishReason);
      const completion: Record<string, unknown> = {
        ...head,
        object: 'chat.completion',
        choices: [{ index: 0, message: messageOf(result), logprobs: null, finish_reason: finishReason }],
        usage,
        svc_route: svcRoute,
        svc_outcome: result.outcome,
      };
      const chargeInput: Charge = { store, request, result, projectId: headers.projectId ?? identity.key.project ?? undefined, idempotencyKey: input.idempotencyKey, completion, hash: input.hash, stream, alone: running === 1, reservation };
      // The charge gives the reservation back, whatever becomes of it; until it is called, run() does.
      const chargeNow = (): ReturnType<typeof charge> => {
        charging();
        return charge(chargeInput);
      };

      if (result.outcome === 'aborted') {
        // Nobody is listening; what ran is still billed.
        await chargeNow().catch(() => undefined);
        if (sse === undefined || !opened) reply.hijack();
        return reply;
      }

      // Failed with nothing sent yet (a non-streamed request, or every backend given up on after one
      // did work): billed for what ran, and an ordinary HTTP error naming its evidence.
      if (sse === undefined || (result.outcome === 'failed' && !opened)) {
        const charged = await chargeNow();
        if (result.outcome === 'failed') {
          reply.header('x-svc-evidence-id', charged.entry.evidenceId);
          throw result.error ?? new HostedError({ status: 502, type: 'server_error', code: 'upstream_unavailable', message: 'The backend failed.' });
        }
        reply.header('x-svc-evidence-id', charged.entry.evidenceId);
        // A twin with the same Idempotency-Key on another replica was billed first: answer as it did.
        if (charged.duplicate) return replay(reply, charged.entry, input.hash, false);
        return completion;
      }

      if (result.outcome === 'failed') {
        open();
        let charged = true;
        await chargeNow().catch(() => {
          charged = false;
        });
        if (charged) sse.send({ ...head, object: 'chat.completion.chunk', choices: [], usage, svc_route: svcRoute, svc_outcome: result.outcome });
        sse.send(hostedErrorBody(toHostedError(result.error ?? ledgerUnavailable())));
        sse.done();
        return reply;
      }
      open();
      sse.send(chunk({ delta: {}, finish_reason: finishReason }));
      let charged: Awaited<ReturnType<typeof charge>>;
      try {
        charged = await chargeNow();
      } catch (error) {
        sse.send(hostedErrorBody(toHostedError(error)));
        sse.done();
        return reply;
      }
      const finalRoute = charged.duplicate && isStoredChatResponse(charged.entry.response) ? charged.entry.response.completion.svc_route : svcRoute;
      sse.send({ ...head, object: 'chat.completion.chunk', choices: [], usage, svc_route: finalRoute, svc_outcome: result.outcome });
      sse.done();
      return reply;
    }
  };
}
