import type { ChatMessage, ChatOptions } from '../../inference/language-model.ts';
import type { EnergyProfile } from '../route-config.ts';

/**
 * Joule arithmetic for hosted requests. Every figure leaving here is rounded to the millijoule:
 * stores keep integer millijoules, so an unrounded float would bill differently from what the
 * evidence shows.
 */
export interface EnergyUse {
  promptTokens: number;
  completionTokens: number;
  /** Wall time the backend spent on the request. */
  seconds: number;
}

export function roundMillijoules(joules: number): number {
  return Math.round(joules * 1000) / 1000;
}

/** The profile's estimate: tokens × their per-token cost plus wall time × the load per second. */
export function estimateJoules(profile: EnergyProfile, use: EnergyUse): number {
  const joules = use.promptTokens * profile.joules_per_prompt_token
    + use.completionTokens * profile.joules_per_completion_token
    + Math.max(0, use.seconds) * profile.joules_per_second;
  return roundMillijoules(joules);
}

/**
 * The least a request can cost on this profile: its prompt and one completion token, with no
 * wall time. If even that exceeds `x-svc-max-joules`, the request is refused before any call.
 */
export function minimumJoules(profile: EnergyProfile, promptTokens: number): number {
  return estimateJoules(profile, { promptTokens, completionTokens: 1, seconds: 0 });
}

/**
 * How many completion tokens fit under `ceiling` after the prompt (and `seconds` of load
 * already spent): the `max_tokens` the backend is given, so it stops itself at the ceiling.
 * Infinity when completion tokens cost nothing on this profile.
 */
export function completionTokenBudget(profile: EnergyProfile, promptTokens: number, ceiling: number, seconds = 0): number {
  const left = ceiling - promptTokens * profile.joules_per_prompt_token - Math.max(0, seconds) * profile.joules_per_second;
  if (left < 0) return 0;
  if (profile.joules_per_completion_token === 0) return Number.POSITIVE_INFINITY;
  // The epsilon keeps an exact fit (0.6 J ceiling, 0.2 J tokens) from losing a token to float error.
  return Math.floor(left / profile.joules_per_completion_token + 1e-9);
}

/**
 * Whether one more completion token would take the running estimate past `ceiling`: the
 * stream is stopped before it is generated.
 */
export function nextTokenExceeds(profile: EnergyProfile, use: EnergyUse, ceiling: number): boolean {
  return estimateJoules(profile, { ...use, completionTokens: use.completionTokens + 1 }) > ceiling + 1e-9;
}

/**
 * The billable rule: never less than the work the request's own evidence reports. That is the
 * larger of the measured Joules (`raw_joules`, when there is a measurement) and the profile's
 * estimate from the backend's own token counts and the time it ran, rounded to the millijoule.
 * `x-svc-max-joules` bounds the work (the request is refused up front when its prompt cannot
 * fit, and the stream stops before a token would cross it) but never cuts the bill below the
 * work: what overshoots the ceiling is at most the last token and the time since the last check.
 */
export function billableJoules(input: { raw: number | null; estimated: number }): number {
  const base = input.raw === null ? input.estimated : Math.max(input.raw, input.estimated);
  return roundMillijoules(Math.max(0, base));
}

/** Completion tokens a request without `max_tokens` or `x-svc-max-joules` reserves Joules for. */
export const RESERVED_COMPLETION_TOKENS = 4096;
/** Seconds of load a request without `x-svc-max-joules` reserves Joules for. */
export const RESERVED_SECONDS = 120;

/**
 * The Joules a request without `x-svc-max-joules` holds of its account's allowance while it runs:
 * its prompt bound, its `max_tokens` (or RESERVED_COMPLETION_TOKENS) and RESERVED_SECONDS of load,
 * on the dearest backend it may run on. It is also the run's ceiling: a request that would cost
 * more stops there, as at `x-svc-max-joules`.
 */
export function reservationJoules(profiles: readonly EnergyProfile[], promptTokens: number, maxTokens: number | undefined): number {
  let most = 0;
  for (const profile of profiles) {
    most = Math.max(most, estimateJoules(profile, { promptTokens, completionTokens: maxTokens ?? RESERVED_COMPLETION_TOKENS, seconds: RESERVED_SECONDS }));
  }
  return most;
}

/** Tokens a chat template adds around each message (role markers, separators) at most, as far as we know templates. */
export const TEMPLATE_TOKENS_PER_MESSAGE = 8;
/** Tokens a template may add once (a default system prompt, a date line, the assistant's header). */
export const TEMPLATE_TOKENS_PER_PROMPT = 64;
/** Tokens a template may add to explain tools (instructions around the definitions), at most as far as we know. */
export const TEMPLATE_TOKENS_FOR_TOOLS = 256;

/**
 * An upper bound on the tokens a backend we cannot ask (an upstream) will count for this
 * request: the prompt as it will process it, template and tools included. Every BPE and
 * SentencePiece vocabulary svc knows covers at least one byte of text per token (byte fallback
 * is the worst case: one token per byte), so the UTF-8 bytes of everything the template renders
 * bound its tokens; each message, the prompt and a tool list add the template's own tokens on
 * top. The up-front ceiling check and the completion budget use it where the backend's own count
 * is not known before the work: it can only over-estimate, so a ceiling is never passed by the
 * prompt. The bill uses the backend's own count when it reports one.
 */
export function promptTokenBound(messages: readonly ChatMessage[], options: Pick<ChatOptions, 'tools' | 'toolChoice' | 'responseFormat'> = {}): number {
  let bytes = 0;
  for (const message of messages) {
    bytes += Buffer.byteLength(message.role, 'utf8') + Buffer.byteLength(message.content, 'utf8');
    if (message.toolCallId !== undefined) bytes += Buffer.byteLength(message.toolCallId, 'utf8');
    for (const call of message.toolCalls ?? []) bytes += Buffer.byteLength(call.id, 'utf8') + Buffer.byteLength(call.name, 'utf8') + Buffer.byteLength(call.arguments, 'utf8');
  }
  let tokens = bytes + messages.length * TEMPLATE_TOKENS_PER_MESSAGE + TEMPLATE_TOKENS_PER_PROMPT;
  if (options.tools !== undefined && options.tools.length > 0) {
    tokens += Buffer.byteLength(JSON.stringify(options.tools), 'utf8') + TEMPLATE_TOKENS_FOR_TOOLS;
  }
  if (options.toolChoice?.type === 'function') tokens += Buffer.byteLength(options.toolChoice.name, 'utf8');
  // Some servers render a response schema into the prompt (as an instruction) as well as a grammar.
  if (options.responseFormat?.type === 'json_schema') tokens += Buffer.byteLength(JSON.stringify(options.responseFormat.schema), 'utf8');
  return tokens;
}
