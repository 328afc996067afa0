import type { ChatMessage, ChatOptions, GenerateResult, GenerationPart, LanguageModel, ModelRegistry } from '../../inference/language-model.ts';
import { OpenAIUpstream } from '../../inference/openai-upstream.ts';
import { resolveUpstreams } from '../../inference/upstream-config.ts';
import { ApiError } from '../../shared/api-error.ts';
import type { SvcRoute } from '../../accounts/svc-route.ts';
import type { BackendConfig } from '../route-config.ts';
import { AllBackendsFailedError, type FailedAttempt } from './all-backends-failed-error.ts';
import { billableJoules, completionTokenBudget, estimateJoules, minimumJoules, nextTokenExceeds, promptTokenBound, roundMillijoules } from './energy.ts';
import { ENGINE_DEFAULT_MODEL } from './load-route-config.ts';
import type { RaplMeasurement, RaplMeter } from './rapl-meter.ts';
import type { Candidate, RoutePlan } from './route-planner.ts';
import { RouteRefusedError } from './route-refused-error.ts';
import { linkedAbort } from '../../shared/linked-abort.ts';
import { countPromptTokens } from '../../anthropic/count-prompt-tokens.ts';
import type { NodePool } from '../nodes/node-pool.ts';
import { expandNodeCandidates } from '../nodes/expand-node-candidates.ts';

/**
 * Runs a planned hosted chat request over its candidate backends, in order. A backend that
 * fails before producing output, or has produced nothing when `x-svc-max-latency-ms` passes,
 * is given up on and the next one tried (recorded as a fallback and why). Once output has
 * reached the caller there is no going back: a later failure ends the request as `failed`,
 * with what ran billed. A Joule ceiling is enforced three times: before any work the prompt as
 * the backend will process it must fit (the engine's own count, taken after the template and
 * tools and before evaluation; for upstreams, a bound that can only over-estimate), the backend
 * gets a `max_tokens` that fits, and the running estimate stops the stream before a token would
 * cross it.
 */
export type RouteOutcome = 'completed' | 'stopped_at_joule_ceiling' | 'failed' | 'aborted';

export interface RouteRequestRun {
  plan: RoutePlan;
  messages: readonly ChatMessage[];
  /** Sampling, tools and output shape as the local route builds them (no signal or onPart). */
  options: Omit<ChatOptions, 'signal' | 'onPart'>;
  /** `x-svc-max-joules`. */
  maxJoules?: number | undefined;
  /** `x-svc-max-latency-ms`: the longest wait for the first token from each backend tried. */
  maxLatencyMs?: number | undefined;
  /** performance.now() when the request arrived (default: now), for `latency_ms`. */
  startedAt?: number | undefined;
  /** The client left: stop everything (outcome `aborted`). */
  signal?: AbortSignal | undefined;
  /** Each part as it is produced, from the backend that serves the request only. */
  onPart?: ((part: GenerationPart) => void) | undefined;
}

export type SvcRouteWithoutEvidence = Omit<SvcRoute, 'evidence_id'>;

export interface RouteResult extends GenerateResult {
  outcome: RouteOutcome;
  /** For `failed`: what went wrong after output had started (the HTTP layer ends the stream with it). */
  error?: ApiError | undefined;
  backend: string;
  queueClass: RoutePlan['queueClass'];
  route: SvcRouteWithoutEvidence;
  /** Backends given up on before this one, with their reasons. */
  attempts: FailedAttempt[];
}

export interface RouteExecutorOptions {
  /** The in-process llama.cpp engine's models, for `engine` backends. */
  engine?: ModelRegistry | undefined;
  /** Where upstream keys are read (the variables `api_key_env` names). */
  env?: NodeJS.ProcessEnv | undefined;
  /** RAPL, for `engine` backends' raw_joules; null or absent → raw_joules is null. */
  meter?: RaplMeter | null | undefined;
  /** The registered inference nodes, for `nodes` backends; absent → a `nodes` backend has no live node. */
  nodes?: NodePool | undefined;
}

/** 4xx statuses that say the request itself is wrong: no other backend would take it either. */
const CLIENT_FAULT = new Set([400, 413, 422]);

function reasonOf(error: unknown, candidate?: Candidate): string {
  const code = error instanceof ApiError && /^[a-z0-9_.-]{1,64}$/i.test(error.code) ? error.code : 'internal';
  // A node's failure names the node (its token's name, set by the operator, never by a caller).
  return candidate?.node === undefined ? `backend_error:${code}` : `node_failed:${candidate.node.nodeId}:${code}`;
}

class LatencyCeiling extends Error {
  override name = 'LatencyCeiling';
  /** The work the attempt did before it was given up on, when it did some (see FailedAttempt). */
  joules: number | undefined;
}

class JouleCeiling extends Error {
  override name = 'JouleCeiling';
}

/** Joules of the backends given up on after they worked (FailedAttempt.joules): billed, and out of the ceiling. */
function workGivenUp(attempts: readonly FailedAttempt[]): number {
  return attempts.reduce((sum, a) => sum + (a.joules ?? 0), 0);
}

function jouleCeilingTooLow(ceiling: number, least: number, promptTokens?: number): RouteRefusedError {
  const prompt = promptTokens === undefined ? 'its prompt (as the backend will process it)' : `its prompt (${promptTokens} tokens as the engine counted it, template and tools included)`;
  return new RouteRefusedError(
    'joule_ceiling_too_low',
    `x-svc-max-joules ${ceiling} cannot cover this request: ${prompt} and one completion token come to ${least} J on the cheapest backend. Nothing was run.`,
    'x-svc-max-joules',
  );
}

export class RouteExecutor {
  readonly #options: RouteExecutorOptions;
  readonly #upstreams = new Map<string, OpenAIUpstream>();

  constructor(options: RouteExecutorOptions = {}) {
    this.#options = options;
  }

  async execute(run: RouteRequestRun): Promise<RouteResult> {
    const startedAt = run.startedAt ?? performance.now();
    const promptBound = promptTokenBound(run.messages, run.options);
    let candidates: Candidate[] = run.plan.candidates;
    if (run.maxJoules !== undefined) {
      const ceiling = run.maxJoules;
      // The engine counts the prompt itself before evaluating it (#attempt checks that count);
      // here it must at least afford one completion token. Upstreams are checked on the bound.
      const least = (c: Candidate): number => minimumJoules(c.backend.energy, c.backend.kind === 'engine' ? 0 : promptBound);
      candidates = candidates.filter((c) => least(c) <= ceiling);
      if (candidates.length === 0) {
        throw jouleCeilingTooLow(ceiling, Math.min(...run.plan.candidates.map(least)));
      }
    }
    const attempts: FailedAttempt[] = [];
    candidates = await expandNodeCandidates(candidates, this.#options.nodes, run.plan.model, attempts);
    if (candidates.length === 0) throw new AllBackendsFailedError(attempts);
    let lastError: unknown;
    /** The first backend that counted a prompt too large for the ceiling (a cheaper one may still fit it). */
    let refusal: RouteRefusedError | undefined;
    for (const candidate of candidates) {
      if (run.signal?.aborted === true) break;
      try {
        return await this.#attempt(candidate, run, startedAt, promptBound, attempts);
      } catch (error) {
        if (error instanceof RouteRefusedError && error.code === 'joule_ceiling_too_low') {
          refusal ??= error;
          attempts.push({ backend: candidate.backend.id, reason: 'joule_ceiling' });
          continue;
        }
        if (error instanceof ApiError && CLIENT_FAULT.has(error.status)) throw error;
        lastError = error;
        const joules = error instanceof LatencyCeiling ? error.joules : undefined;
        attempts.push({ backend: candidate.backend.id, reason: error instanceof LatencyCeiling ? 'latency_ceiling' : reasonOf(error, candidate), ...(joules !== undefined && joules > 0 ? { joules } : {}) });
      }
    }
    if (run.signal?.aborted === true) {
      // The backend being tried when the caller left (attempts may also hold `nodes` backends with no live node).
      const tried = attempts.filter((a) => candidates.some((c) => c.backend.id === a.backend)).length;
      const last = candidates[Math.min(tried, candidates.length - 1)]!;
      return this.#result(last, run, startedAt, { text: '', toolCalls: [], finishReason: 'abort', usage: { promptTokens: 0, completionTokens: 0 } }, {
        outcome: 'aborted', attempts, seconds: 0, promptTokens: 0, counted: 0, raw: null,
      });
    }
    // Every backend was given up on, and some did work first: the request failed, and what ran is
    // billed (the evidence names the last backend that worked; its estimate is 0, the attempts' work is billable).
    const worked = attempts.findLast((a) => a.joules !== undefined);
    const workedOn = worked === undefined ? undefined : candidates.find((c) => c.backend.id === worked.backend);
    if (workedOn !== undefined) {
      return this.#result(workedOn, run, startedAt, { text: '', toolCalls: [], finishReason: 'abort', usage: { promptTokens: 0, completionTokens: 0 } }, {
        outcome: 'failed', error: new AllBackendsFailedError(attempts, lastError), attempts, seconds: 0, promptTokens: 0, counted: 0, raw: null,
      });
    }
    // Nothing ran: when every backend counted a prompt too large for the ceiling, that is the answer.
    if (refusal !== undefined && attempts.every((a) => a.reason === 'joule_ceiling')) throw refusal;
    throw new AllBackendsFailedError(attempts, lastError);
  }

  async #attempt(candidate: Candidate, run: RouteRequestRun, startedAt: number, promptBound: number, attempts: FailedAttempt[]): Promise<RouteResult> {
    const { backend } = candidate;
    const model = candidate.node ?? this.#model(candidate, run.plan.model);
    const profile = backend.energy;
    // The prompt's tokens as the metering rules use them: the engine's own count once it has
    // counted (onPromptTokens below), an upstream's bound from the start. Before the engine counts,
    // nothing of the prompt has run.
    const engine = backend.kind === 'engine';
    let promptTokens: number | undefined = engine ? undefined : promptBound;
    /** The completion cap the engine took from the Joule budget, when it is below the caller's own. */
    let engineCap: number | undefined;
    // Aborted by a ceiling below (its reason says which); the backend's signal also follows the run's.
    const stop = new AbortController();
    let started = false;
    let counted = 0;
    // Load time (the per-second term and measured energy) counts from when the backend starts
    // on this request: time waiting in the engine's queue for a free sequence is not its work.
    // An engine that does not say when it starts (upstreams) is timed from the call.
    let attemptStart = performance.now();

    let timer: NodeJS.Timeout | undefined;
    // Each backend gets the whole ceiling to its first token: counted from the request's
    // arrival, a fallback would start with no time left and could never help.
    if (run.maxLatencyMs !== undefined) {
      // setTimeout fires at once past 2^31 − 1 ms; a ceiling beyond ~24 days is no ceiling.
      timer = setTimeout(() => {
        // A caller already gone is the outcome; a ceiling reached after that is not.
        if (!started && run.signal?.aborted !== true) stop.abort(new LatencyCeiling());
      }, Math.min(run.maxLatencyMs, 2 ** 31 - 1));
    }

    // The ceiling this attempt works under: what is left of x-svc-max-joules after the work of
    // backends given up on before it (billed with this one).
    const ceiling = run.maxJoules === undefined ? undefined : run.maxJoules - workGivenUp(attempts);
    if (ceiling !== undefined && !engine && minimumJoules(profile, promptBound) > ceiling) {
      clearTimeout(timer);
      throw jouleCeilingTooLow(ceiling, minimumJoules(profile, promptBound));
    }

    // The budget lowers the caller's own max_tokens; it never sets one the caller did not send:
    // a generous ceiling would become a max_tokens past the model's context (a 400 about a
    // parameter nobody sent). Without one, the running estimate below stops the stream.
    let maxTokens = run.options.maxTokens;
    if (ceiling !== undefined && maxTokens !== undefined && promptTokens !== undefined) {
      const budget = completionTokenBudget(profile, promptTokens, ceiling);
      if (Number.isFinite(budget)) maxTokens = Math.min(maxTokens, budget);
    }

    // Wall time costs Joules too (joules_per_second): a backend slow to answer, or stalled between
    // tokens, is stopped when its time alone would leave no room for one more token, not only when
    // a token arrives. Armed once the backend works on the request (an upstream at once, the
    // engine once it has counted its prompt) and again after each token.
    let jouleTimer: NodeJS.Timeout | undefined;
    const armJouleTimer = (): void => {
      clearTimeout(jouleTimer);
      if (ceiling === undefined || profile.joules_per_second <= 0 || stop.signal.aborted) return;
      const seconds = (performance.now() - attemptStart) / 1000;
      const next = estimateJoules(profile, { promptTokens: promptTokens ?? promptBound, completionTokens: counted + 1, seconds });
      const waitMs = Math.max(0, ((ceiling - next) / profile.joules_per_second) * 1000);
      jouleTimer = setTimeout(() => {
        if (run.signal?.aborted !== true) stop.abort(new JouleCeiling());
      }, Math.min(waitMs, 2 ** 31 - 1));
    };

    // The engine's count of the prompt, before it evaluates any of it: a prompt that cannot fit the
    // ceiling with one completion token is refused there, with nothing run; otherwise the budget
    // caps its completion (the engine has no context-size trap: it takes the smaller of the two).
    const onPromptTokens = !engine ? undefined : (counted: number): number | undefined => {
      // Given up on (the latency ceiling) or left while it waited: nothing of the prompt is evaluated.
      if (link.signal.aborted) throw link.signal.reason;
      if (ceiling === undefined) {
        promptTokens = counted;
        return undefined;
      }
      const budget = completionTokenBudget(profile, counted, ceiling);
      if (budget < 1) throw jouleCeilingTooLow(ceiling, minimumJoules(profile, counted), counted);
      promptTokens = counted;
      armJouleTimer();
      if (!Number.isFinite(budget) || budget >= (run.options.maxTokens ?? Infinity)) return undefined;
      engineCap = budget;
      return budget;
    };

    const onPart = (part: GenerationPart): void => {
      if (stop.signal.aborted) return;
      if (!started) {
        started = true;
        clearTimeout(timer);
      }
      if (part.type === 'text-delta' || part.type === 'tool-call-delta') counted++;
      run.onPart?.(part);
      if (ceiling !== undefined) {
        const seconds = (performance.now() - attemptStart) / 1000;
        if (run.signal?.aborted !== true && nextTokenExceeds(profile, { promptTokens: promptTokens ?? promptBound, completionTokens: counted, seconds }, ceiling)) stop.abort(new JouleCeiling());
        else armJouleTimer();
      }
    };

    // Measured energy is shared among the requests running at each reading, so a request waiting
    // for a sequence must not be one of them: the engine's measurement opens when it starts
    // (engines say so through onStarted; nothing is measured for one that never started).
    const meter = backend.kind === 'engine' ? (this.#options.meter ?? undefined) : undefined;
    let measurement: RaplMeasurement | undefined;
    const onStarted = (): void => {
      attemptStart = performance.now();
      measurement ??= meter?.begin();
    };
    let result: GenerateResult;
    const link = linkedAbort([run.signal, stop.signal]);
    if (!engine) armJouleTimer();
    try {
      result = await model.chat(run.messages, { ...run.options, maxTokens, signal: link.signal, onPart, onStarted, onPromptTokens });
    } catch (error) {
      clearTimeout(timer);
      clearTimeout(jouleTimer);
      link.release();
      const failedRaw = measurement?.end() ?? (stop.signal.reason instanceof JouleCeiling && candidate.node !== undefined ? await candidate.node.energy() : null);
      if (stop.signal.reason instanceof LatencyCeiling && !started) throw this.#givenUp(stop.signal.reason, profile, promptTokens, engine, attemptStart);
      // Stopped at the ceiling by its time alone (a backend that threw on the abort): what ran is billed.
      if (stop.signal.reason instanceof JouleCeiling) {
        const seconds = (performance.now() - attemptStart) / 1000;
        return this.#result(candidate, run, startedAt, { text: '', toolCalls: [], finishReason: 'length', usage: { promptTokens: 0, completionTokens: counted } }, {
          outcome: 'stopped_at_joule_ceiling', attempts, seconds, promptTokens: promptTokens ?? 0, counted, raw: failedRaw,
        });
      }
      // Nothing reached the caller (no output yet, or a non-streamed request, which sees nothing
      // until the end): the next backend may still answer it whole, and nothing is billed.
      if (!started || run.onPart === undefined) throw error;
      const seconds = (performance.now() - attemptStart) / 1000;
      const apiError = error instanceof ApiError
        ? error
        : new ApiError({ status: 502, type: 'server_error', code: 'backend_failed', message: `Backend '${backend.id}' failed mid-answer.`, cause: error });
      return this.#result(candidate, run, startedAt, { text: '', toolCalls: [], finishReason: 'abort', usage: { promptTokens: 0, completionTokens: counted } }, {
        outcome: 'failed', error: apiError, attempts, seconds, promptTokens: promptTokens ?? 0, counted, raw: null,
      });
    }
    clearTimeout(timer);
    clearTimeout(jouleTimer);
    link.release();
    // A node measures on its own accelerator and says afterwards what this request's share was.
    const raw = measurement?.end() ?? (candidate.node !== undefined ? await candidate.node.energy() : null);
    const seconds = (performance.now() - attemptStart) / 1000;
    const reason = stop.signal.reason as unknown;
    if (reason instanceof LatencyCeiling && !started) throw this.#givenUp(reason, profile, promptTokens, engine, attemptStart);
    if (reason instanceof JouleCeiling) {
      return this.#result(candidate, run, startedAt, { ...result, finishReason: 'length' }, { outcome: 'stopped_at_joule_ceiling', attempts, seconds, promptTokens: promptTokens ?? 0, counted, raw });
    }
    if (run.signal?.aborted === true) {
      return this.#result(candidate, run, startedAt, result, { outcome: 'aborted', attempts, seconds, promptTokens: promptTokens ?? 0, counted, raw });
    }
    // The backend stopped at the max_tokens the Joule budget gave it, not the caller's own.
    const budgetCap = maxTokens !== run.options.maxTokens ? maxTokens : engineCap;
    const joulesCut = result.finishReason === 'length' && budgetCap !== undefined && result.usage.completionTokens >= budgetCap;
    return this.#result(candidate, run, startedAt, result, { outcome: joulesCut ? 'stopped_at_joule_ceiling' : 'completed', attempts, seconds, promptTokens: promptTokens ?? 0, counted, raw });
  }

  /**
   * An attempt given up at the latency ceiling, with its work when it did some: the engine had
   * counted its prompt (it evaluates it once begun, whatever the abort says) and ran until it let
   * go, which the executor waited for. An upstream's work is the upstream's: not billed here.
   */
  #givenUp(ceiling: LatencyCeiling, profile: Candidate['backend']['energy'], promptTokens: number | undefined, engine: boolean, attemptStart: number): LatencyCeiling {
    if (engine && promptTokens !== undefined) {
      ceiling.joules = estimateJoules(profile, { promptTokens, completionTokens: 0, seconds: (performance.now() - attemptStart) / 1000 });
    }
    return ceiling;
  }

  #result(
    candidate: Candidate,
    run: RouteRequestRun,
    startedAt: number,
    result: GenerateResult,
    how: { outcome: RouteOutcome; error?: ApiError; attempts: FailedAttempt[]; seconds: number; promptTokens: number; counted: number; raw: number | null },
  ): RouteResult {
    const { backend } = candidate;
    // The backend's own counts when it reports them; ours where a stream was cut short (the
    // engine's count of the prompt, or an upstream's over-estimating bound, so a cut stream is
    // never billed below its work). Deltas are not tokens (llama.cpp's detokenizer can emit one
    // token's text in two chunks), so counted deltas stand in only when the backend reported no
    // completion tokens at all.
    const promptTokens = result.usage.promptTokens > 0 ? result.usage.promptTokens : how.promptTokens;
    const completionTokens = result.usage.completionTokens > 0 ? result.usage.completionTokens : how.counted;
    const estimated = estimateJoules(backend.energy, { promptTokens, completionTokens, seconds: how.seconds });
    const raw = how.raw === null ? null : roundMillijoules(how.raw);
    // Backends given up on after they worked (FailedAttempt.joules) are billed with the one that answered.
    const abandoned = workGivenUp(how.attempts);
    return {
      ...result,
      usage: { promptTokens, completionTokens },
      outcome: how.outcome,
      ...(how.error !== undefined ? { error: how.error } : {}),
      backend: backend.id,
      queueClass: run.plan.queueClass,
      attempts: how.attempts,
      route: {
        execution_plane: backend.execution_plane,
        policy: run.plan.policy,
        privacy_tier: run.plan.privacyTier,
        model: run.plan.model,
        provider: backend.provider,
        latency_ms: Math.round(performance.now() - startedAt),
        raw_joules: raw,
        estimated_joules: estimated,
        billable_joules: roundMillijoules(billableJoules({ raw, estimated }) + abandoned),
        fallback: how.attempts.length > 0,
        fallback_reason: how.attempts.length > 0 ? how.attempts.map((a) => a.reason).join(',') : null,
      },
    };
  }

  /**
   * The prompt's size in tokens on the backend the plan would run it on (Anthropic's
   * `count_tokens`), with nothing generated and nothing billed: an engine backend counts exactly,
   * template and tools included, and stops before evaluating anything; an upstream cannot count
   * without answering, so its count is the over-estimating bound its Joule ceiling is checked on.
   * An engine backend without its model is skipped for the next candidate, as execute() does.
   */
  async countPrompt(plan: RoutePlan, messages: readonly ChatMessage[], options: Pick<ChatOptions, 'tools' | 'toolChoice' | 'parallelToolCalls' | 'signal'>): Promise<{ tokens: number; backend: string; exact: boolean }> {
    const attempts: FailedAttempt[] = [];
    let lastError: unknown;
    for (const candidate of plan.candidates) {
      const backend = candidate.backend.id;
      if (candidate.backend.kind !== 'engine') return { tokens: promptTokenBound(messages, options), backend, exact: false };
      try {
        return { tokens: await countPromptTokens(this.#model(candidate, plan.model), messages, options), backend, exact: true };
      } catch (error) {
        if (error instanceof ApiError && CLIENT_FAULT.has(error.status)) throw error;
        if (options.signal?.aborted === true) throw error;
        lastError = error;
        attempts.push({ backend, reason: reasonOf(error) });
      }
    }
    throw new AllBackendsFailedError(attempts, lastError);
  }

  /** The LanguageModel a candidate runs on; a missing one is a backend error like any other. */
  #model(candidate: Candidate, hostedModel: string): LanguageModel {
    const { backend, backendModel } = candidate;
    if (backend.kind === 'engine') {
      const engine = this.#options.engine;
      let id = backendModel;
      if (id === ENGINE_DEFAULT_MODEL) {
        id = engine?.list().find((m) => m.capabilities === undefined || m.capabilities.includes('chat'))?.id ?? '';
      }
      const model = id === '' ? undefined : engine?.model(id);
      if (model === undefined) {
        throw new ApiError({ status: 502, type: 'server_error', code: 'engine_model_unavailable', message: `Backend '${backend.id}' has no engine model for '${hostedModel}'.` });
      }
      return model;
    }
    return this.#upstream(backend).model(backendModel, hostedModel);
  }

  #upstream(backend: BackendConfig): OpenAIUpstream {
    const existing = this.#upstreams.get(backend.id);
    if (existing !== undefined) return existing;
    if (backend.upstream === undefined) throw new Error(`backend '${backend.id}' has no upstream table`);
    // The same resolution as the local daemon's [[upstreams]]: URL normalised, key from the environment, timeouts defaulted.
    const [spec] = resolveUpstreams([{ ...backend.upstream, name: backend.id, discover: false, models: Object.values(backend.models) }], [], this.#options.env ?? process.env);
    const upstream = new OpenAIUpstream(spec!);
    this.#upstreams.set(backend.id, upstream);
    return upstream;
  }

  /** Closes upstream connections. */
  async close(): Promise<void> {
    await Promise.all([...this.#upstreams.values()].map((u) => u.close()));
    this.#upstreams.clear();
  }
}
