import type { ChatMessage } from '../../inference/language-model.ts';
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
 * The billable rule: measured Joules (`raw_joules`) when there is a measurement, else the
 * profile's estimate; never more than the caller's `x-svc-max-joules` (the caller agreed to
 * pay up to it, and the stop rule keeps the work there); rounded to the millijoule.
 */
export function billableJoules(input: { raw: number | null; estimated: number; ceiling?: number | undefined }): number {
  const base = input.raw ?? input.estimated;
  const capped = input.ceiling === undefined ? base : Math.min(base, input.ceiling);
  return roundMillijoules(Math.max(0, capped));
}

/**
 * Prompt tokens before a backend has counted them: about 4 bytes of UTF-8 per token (the
 * usual rule for BPE vocabularies on English text) plus 4 tokens per message for the chat
 * template's role markers. An estimate for the up-front ceiling check and the completion
 * budget only; the evidence uses the backend's own count when it reports one.
 */
export function estimatePromptTokens(messages: readonly ChatMessage[]): number {
  let tokens = 0;
  for (const message of messages) {
    let bytes = Buffer.byteLength(message.content, 'utf8');
    for (const call of message.toolCalls ?? []) bytes += Buffer.byteLength(call.name, 'utf8') + Buffer.byteLength(call.arguments, 'utf8');
    tokens += Math.ceil(bytes / 4) + 4;
  }
  return tokens;
}
