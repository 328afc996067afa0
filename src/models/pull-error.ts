/**
 * Why a pull failed. The message is one line a user can act on (the CLI prints it as is);
 * `code` is stable for callers that branch on it (the console, tests).
 */
export type PullErrorCode =
  | 'invalid_reference'
  | 'repo_not_found'
  | 'revision_not_found'
  | 'file_not_found'
  | 'gated'
  | 'unauthorized'
  | 'no_match'
  | 'ambiguous'
  | 'network'
  | 'http'
  | 'checksum_mismatch'
  | 'size_mismatch'
  | 'not_gguf'
  | 'disk_full'
  | 'permission'
  | 'exists'
  | 'busy'
  | 'aborted';

export class PullError extends Error {
  override name = 'PullError';
  readonly code: PullErrorCode;
  /** Worth another attempt with the same arguments (a dropped connection, a 5xx, a 429). */
  readonly isRetryable: boolean;

  constructor(code: PullErrorCode, message: string, options: { cause?: unknown; retryable?: boolean } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.isRetryable = options.retryable ?? false;
  }
}
