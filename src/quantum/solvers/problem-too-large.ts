import { ApiError } from '../../shared/api-error.ts';
import { SimulatorCapacityError } from '../simulator/memory-guard.ts';

/** The one answer for "this problem does not fit the simulator here": 422 `problem_too_large`. */
export function problemTooLarge(message: string, param: string | null = 'problem'): ApiError {
  return ApiError.unprocessable(message, param, 'problem_too_large');
}

/** Maps a simulator capacity refusal to the wire error; anything else passes through unchanged. */
export function toProblemError(error: unknown): unknown {
  if (error instanceof SimulatorCapacityError) {
    return problemTooLarge(`The problem needs ${error.qubits} qubits, more than the local simulator can hold: ${error.message}`);
  }
  return error;
}
