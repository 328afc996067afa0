import type { StreamShape } from '../../openai/stream-shape.ts';
import type { RouteResult } from '../routing/route-executor.ts';

/** The fields every hosted answer adds to its face's own shape: the run's evidence and how it ended. */
export type EvidenceFields = Readonly<Record<string, unknown>>;

/**
 * One answer in its API's shape, made per request: what the one hosted pipeline (limits, intake,
 * idempotency, plan, hold, run, evidence, charge) hands the reply to write.
 */
export interface AnswerShape {
  /** The shape of its stream, errors in the API's envelope. */
  stream: StreamShape;
  /** The whole answer of a run, with the evidence fields (what a stream's parts assemble into). */
  whole(result: RouteResult, evidence: EvidenceFields): Record<string, unknown>;
  /** Told how the run ended before the stream is finished (Anthropic's closing event names a stop sequence). */
  settle?(result: RouteResult): void;
  /**
   * A stream that failed once open: where the evidence of what ran goes. Absent: a usage chunk
   * before the error (chat completions); present: the API's error event carries it (Anthropic's
   * streams end with the error event alone).
   */
  evidenceOnError?(evidence: EvidenceFields): void;
}

/** An API the hosted pipeline answers in: chat completions, or Anthropic's Messages. */
export interface HostedFace {
  answerShape(model: string): AnswerShape;
  /** A stored whole answer as the stream it was sent as, for an idempotent replay. */
  replayStream(stored: Readonly<Record<string, unknown>>): { chunks: unknown[]; doneSentinel: boolean };
}
