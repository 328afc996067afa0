import { UserError } from '../shared/user-error.ts';

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

/** Exit codes as shells expect them: 130 for an interrupted pull, 2 for a reference that cannot be read. */
function exitCodeOf(code: PullErrorCode): number {
  if (code === 'aborted') return 130;
  return code === 'invalid_reference' ? 2 : 1;
}

export class PullError extends UserError {
  override name = 'PullError';
  readonly code: PullErrorCode;
  /** Worth another attempt with the same arguments (a dropped connection, a 5xx, a 429). */
  readonly isRetryable: boolean;

  constructor(code: PullErrorCode, message: string, options: { cause?: unknown; retryable?: boolean } = {}) {
    super(message, { exitCode: exitCodeOf(code), cause: options.cause });
    this.code = code;
    this.isRetryable = options.retryable ?? false;
  }
}
