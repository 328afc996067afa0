import { SimulatorCapacityError } from './memory-guard.ts';

/** An error as it crosses a worker boundary: name, message, stack and cloneable own fields. */
export interface SerializedError {
  name: string;
  message: string;
  stack?: string;
  props: Record<string, unknown>;
}

/**
 * Raised in the calling thread for a task that failed in a worker (unless the error is one the
 * simulator revives as itself, like SimulatorCapacityError). `remoteName` and `props` carry what
 * the worker threw (e.g. an ApiError's code and status) so callers can map it.
 */
export class WorkerTaskError extends Error {
  readonly remoteName: string;
  readonly props: Record<string, unknown>;

  constructor(message: string, remoteName: string, props: Record<string, unknown> = {}) {
    super(message);
    this.name = 'WorkerTaskError';
    this.remoteName = remoteName;
    this.props = props;
  }
}

function cloneable(v: unknown): boolean {
  return v === null || ['string', 'number', 'boolean', 'undefined'].includes(typeof v);
}

export function serializeError(err: unknown): SerializedError {
  if (!(err instanceof Error)) return { name: 'Error', message: String(err), props: {} };
  const props: Record<string, unknown> = {};
  for (const key of Object.keys(err)) {
    const v = (err as unknown as Record<string, unknown>)[key];
    if (cloneable(v)) props[key] = v;
  }
  if ('code' in err && cloneable(err.code)) props['code'] = err.code;
  return { name: err.name, message: err.message, stack: err.stack, props };
}

export function reviveError(e: SerializedError): Error {
  if (e.name === 'SimulatorCapacityError') {
    const p = e.props;
    return new SimulatorCapacityError(
      Number(p['qubits']),
      Number(p['bytesNeeded']),
      Number(p['bytesAllowed']),
      Number(p['maxQubits']),
      e.message,
    );
  }
  const err = new WorkerTaskError(e.message, e.name, e.props);
  if (e.stack) err.stack = `${err.name}: ${e.message}\n    [in worker] ${e.stack}`;
  return err;
}
