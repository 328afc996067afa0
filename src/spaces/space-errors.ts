import { ApiError } from '../shared/api-error.ts';

/** The space library's 409: what was asked conflicts with what the space holds now. */
export function spaceConflict(message: string, code: string, param: string | null = null): ApiError {
  return new ApiError({ status: 409, type: 'invalid_request_error', code, message, param });
}

/** The space's vectors are of another embedder than the one that would be used: it needs a reindex first. */
export function reindexRequired(message: string): ApiError {
  return spaceConflict(message, 'reindex_required', 'space');
}
