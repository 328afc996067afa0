import type { LlamaContext, LlamaContextSequence } from 'node-llama-cpp';

/**
 * The llama.cpp sequence id of a node-llama-cpp sequence (`_sequenceId`, internal in 3.22.1;
 * the order batches are sorted in below). Infinity when it cannot be read.
 */
export function sequenceIdOf(sequence: LlamaContextSequence): number {
  const id = (sequence as unknown as { _sequenceId?: unknown })._sequenceId;
  return typeof id === 'number' ? id : Number.POSITIVE_INFINITY;
}

/**
 * One decode request as node-llama-cpp 3.22's LlamaContext queues it (`_decodeTokens`,
 * internal): the fields this module reads; the rest pass through untouched.
 */
interface QueuedDecode {
  sequenceId: number;
  tokens: readonly number[];
  firstTokenSequenceIndex: number;
  /** Called after every batch that took tokens of this request, with the sequence's state length. */
  afterBatchAction?: ((sequenceStateLength: number) => unknown) | undefined;
}

type DecodeTokens = (item: QueuedDecode, logitDataMapper: unknown) => Promise<unknown>;

/**
 * Makes the parallel sequences of one llama.cpp context decode their next tokens in one batch,
 * the way llama-server's slot loop does, and lets requests that join a running batch in.
 *
 * Why this is needed (node-llama-cpp 3.22.1, measured): LlamaContext dispatches queued tokens
 * in a loop that holds the context lock, and after each batch it starts the next one at once
 * with whatever is queued at that moment. Each sequence queues its next token only after its
 * own sampling result went through LlamaChat (many microtasks), so the sequence sampled last
 * always misses the next batch: 4 streams ran as batches of 3 (and 3 as batches of 2 and 1),
 * 1.1–1.3× the single-stream rate where llama-server reaches 1.7×. Worse, the loop only ends
 * when the queue is empty at its check, which then never happens while two or more sequences
 * generate, so anything that needs the context lock waits for every running generation to end:
 * LlamaChat erases a reused sequence's previous tokens under that lock, so a request joining
 * running streams got its first token only after they had all finished (3–4 s instead of ms).
 *
 * The fix holds the tokens a sequence queues while a batch is still open (decoding, sampling, or
 * being handed back), and hands all held tokens over together, in sequence order, one event-loop
 * turn after the batch closed. The dispatch loop then finds nothing queued, so it ends and
 * releases the lock (a joining request's erase runs there), and the next batch holds every
 * sequence's token. On an idle context tokens go on the next turn, as node-llama-cpp's own
 * "nextCycle" schedule does, together with whatever else arrives in this one.
 *
 * This wraps `_decodeTokens`, an internal method of node-llama-cpp (pinned at 3.22.1 in
 * package.json); when it is missing the context is left as it is and `false` is returned.
 * test/inference/decode-sequences-together.test.ts checks both effects on a real model.
 */
export function decodeSequencesTogether(context: LlamaContext): boolean {
  const target = context as unknown as { _decodeTokens?: DecodeTokens };
  const original = target._decodeTokens;
  if (typeof original !== 'function' || typeof context.dispatchPendingBatch !== 'function') return false;
  const decode: DecodeTokens = original.bind(context);

  /** Requests handed to node-llama-cpp whose last batch has not closed yet. */
  const open = new Set<object>();
  /** Requests waiting to be handed over together. */
  let held: { item: QueuedDecode; logitDataMapper: unknown; settle: (result: Promise<unknown>) => void }[] = [];
  let releaseScheduled = false;

  const release = (): void => {
    releaseScheduled = false;
    // In sequence order: llama.cpp splits a batch of separate (non-unified) sequence caches into
    // one compute pass per run of consecutive, increasing sequence ids, so 4 tokens queued in
    // the order their sampling finished (say 2, 0, 3, 1) cost 2–4 passes instead of one.
    const ready = held.sort((a, b) => a.item.sequenceId - b.item.sequenceId);
    held = [];
    for (const { item, logitDataMapper, settle } of ready) settle(handOver(item, logitDataMapper));
    // Everything is queued now: start the batch in this turn.
    if (ready.length > 0 && !context.disposed) context.dispatchPendingBatch();
  };

  const scheduleRelease = (): void => {
    if (releaseScheduled) return;
    releaseScheduled = true;
    // A turn later: after the dispatch loop's check, which then finds its queue empty and ends
    // (releasing the context lock), and after whatever else arrives in this turn.
    setImmediate(release);
  };

  const close = (request: object): void => {
    if (!open.delete(request)) return;
    if (open.size === 0 && held.length > 0) scheduleRelease();
  };

  const handOver = (item: QueuedDecode, logitDataMapper: unknown): Promise<unknown> => {
    const request = {};
    open.add(request);
    // The batch that decodes this request's last token calls afterBatchAction with this length.
    const lastStateLength = item.firstTokenSequenceIndex + item.tokens.length + 1;
    const afterBatchAction = item.afterBatchAction;
    const result = decode({
      ...item,
      afterBatchAction: (sequenceStateLength: number) => {
        const action = afterBatchAction?.(sequenceStateLength);
        if (sequenceStateLength >= lastStateLength) close(request);
        return action;
      },
    }, logitDataMapper);
    // A failed decode never reaches afterBatchAction: close it once it settled, whatever happened.
    const settled = (): void => { setImmediate(() => close(request)); };
    result.then(settled, settled);
    return result;
  };

  target._decodeTokens = (item, logitDataMapper) => new Promise((resolve, reject) => {
    held.push({ item, logitDataMapper, settle: (result) => { result.then(resolve, reject); } });
    // Nothing decoding: go on the next turn (node-llama-cpp's own schedule), with whatever else
    // arrives in this one. Otherwise the batch that closes last releases everything held.
    if (open.size === 0) scheduleRelease();
  });
  return true;
}
