/**
 * A shared prompt prefix shorter than this (in characters, a few tokens) saves less prompt
 * evaluation than a gap in the sequence ids costs on every decode step (see chooseSequence).
 */
export const MIN_REUSED_PREFIX = 64;

function commonPrefixLength(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  return i;
}

/**
 * Which free sequence of a context a new generation should take: the one whose previous prompt
 * shares the longest prefix with this one (at least MIN_REUSED_PREFIX characters), so
 * node-llama-cpp reuses that prefix's KV cache instead of evaluating it again (a follow-up turn
 * of a conversation resends the whole history); otherwise the lowest sequence id. Low ids keep
 * the running sequences consecutive: llama.cpp decodes a batch of separate sequence caches in
 * one compute pass per run of consecutive ids, so sequences {0, 2} cost ~1.6× a step of {0, 1}
 * (measured on the bench model, 1 thread). Returns an index into `free`, or -1 when it is empty.
 *
 * `prompt` and the remembered prompts are the request's texts joined with a separator; they
 * stand in for the rendered prompt, which is only tokenized once a sequence is chosen.
 */
export function chooseSequence<S>(
  free: readonly S[],
  idOf: (sequence: S) => number,
  previousPrompt: (sequence: S) => string | undefined,
  prompt: string,
): number {
  let best = -1;
  let bestShared = 0;
  for (const [index, sequence] of free.entries()) {
    const previous = previousPrompt(sequence);
    const shared = previous === undefined ? 0 : commonPrefixLength(previous, prompt);
    const score = shared >= MIN_REUSED_PREFIX ? shared : 0;
    if (best < 0 || score > bestShared || (score === bestShared && idOf(sequence) < idOf(free[best]!))) {
      best = index;
      bestShared = score;
    }
  }
  return best;
}
