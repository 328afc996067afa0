import { ApiError, type ApiErrorOptions } from './api-error.ts';

/**
 * What a worker (thread or process) posts back for one task: its value, or why it failed. An
 * ApiError crosses by value (a class does not survive structured cloning) and is answered as
 * it is; anything else keeps only a detail, for the log, never for the client.
 */
export type TaskReply<T = unknown> =
  | { id: number; ok: true; value: T }
  | { id: number; ok: false; apiError: ApiErrorOptions | null; detail: string };

/** The reply for task `id`, which threw `error`. */
export function failedTaskReply(id: number, error: unknown): TaskReply<never> {
  if (error instanceof ApiError) return { id, ok: false, apiError: error.toOptions(), detail: '' };
  return { id, ok: false, apiError: null, detail: error instanceof Error ? (error.stack ?? error.message) : String(error) };
}

/** A reply's value; for a failure, throws its ApiError, or an opaque 500 whose detail stays in the cause. */
export function taskReplyValue<T>(reply: TaskReply<T>): T {
  if (reply.ok) return reply.value;
  throw reply.apiError !== null ? new ApiError(reply.apiError) : ApiError.internal(new Error(reply.detail));
}
