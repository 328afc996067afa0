import { ApiError } from '../shared/api-error.ts';
import { UserError } from '../shared/user-error.ts';
import { printable } from './model-view.ts';

/** Where a failed command's report goes, and whether the user asked for details (SVC_DEBUG=1). */
export interface CliErrorOutput {
  write: (text: string) => void;
  debug: boolean;
}

const isSystemError = (error: unknown): error is NodeJS.ErrnoException =>
  error instanceof Error && typeof (error as NodeJS.ErrnoException).code === 'string' && typeof (error as NodeJS.ErrnoException).syscall === 'string';

/** The message of an error that is already written for the user, or undefined for any other. */
function userMessage(error: unknown): string | undefined {
  if (error instanceof UserError) return error.message;
  // A client error of the API (a refused solve, a model not found) says what was wrong.
  if (error instanceof ApiError && error.status < 500) return error.message;
  // Node's file and socket errors name the call, the path and the cause: "EACCES: permission denied, mkdir '/x'".
  if (isSystemError(error)) return error.message;
  return undefined;
}

/** One line, without control characters (a message can quote what the user or a server sent). */
function oneLine(text: string): string {
  return printable(text.replace(/\s*\n\s*/g, ' ').trim());
}

/**
 * Reports an error thrown by a command as one line on stderr, prefixed with the command
 * (`svc models list: …`), and returns the exit code. Errors written for the user print their
 * message; anything else is a bug or an unforeseen failure: one line and a pointer to
 * SVC_DEBUG=1, which prints the stack (and causes) too.
 */
export function reportCliError(error: unknown, command: string, output: CliErrorOutput): number {
  const prefix = command === '' ? 'svc' : `svc ${command}`;
  const message = userMessage(error);
  if (message !== undefined) {
    output.write(`${prefix}: ${oneLine(message)}\n`);
    if (output.debug && error instanceof Error && error.stack !== undefined) output.write(`${error.stack}\n`);
    return error instanceof UserError ? error.exitCode : 1;
  }
  const text = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  output.write(`${prefix}: unexpected error: ${oneLine(text).slice(0, 500)}${output.debug ? '' : ' (run with SVC_DEBUG=1 for details)'}\n`);
  if (output.debug) output.write(`${describeDeep(error)}\n`);
  return 1;
}

/** The stack of an error and of each of its causes. */
function describeDeep(error: unknown): string {
  const parts: string[] = [];
  for (let e: unknown = error, depth = 0; e !== undefined && depth < 8; depth++) {
    parts.push(e instanceof Error ? (e.stack ?? `${e.name}: ${e.message}`) : String(e));
    e = e instanceof Error ? e.cause : undefined;
    if (e !== undefined) parts.push('caused by:');
  }
  return parts.join('\n');
}

/** Whether SVC_DEBUG asks for details (any value but empty, 0 or false). */
export function debugRequested(env: NodeJS.ProcessEnv = process.env): boolean {
  const value = env['SVC_DEBUG']?.trim().toLowerCase();
  return value !== undefined && value !== '' && value !== '0' && value !== 'false';
}
