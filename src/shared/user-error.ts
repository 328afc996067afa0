/**
 * An error whose message is written for the person who ran svc: what is wrong and what to do,
 * in one line. The CLI prints it as is, without a stack trace, and exits with `exitCode`
 * (src/cli/cli-errors.ts). Domain errors meant for the terminal extend it (ConfigError,
 * ModelCatalogError); errors that cross the wire are ApiError instead.
 */
export class UserError extends Error {
  override name = 'UserError';
  readonly exitCode: number;

  constructor(message: string, options: { exitCode?: number; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.exitCode = options.exitCode ?? 1;
  }
}
