import type { Logger } from 'pino';
import { UserError } from '../shared/user-error.ts';
import { onStopSignals } from './stop-signals.ts';

/**
 * What `svc serve` and `svc hosted` share around their servers: a start failure with a known
 * cause becomes one line (logged for whoever collects the log, then reported on stderr by the
 * CLI's error handler; the stack only with SVC_DEBUG=1), and SIGINT/SIGTERM close the server
 * gracefully, a second signal (a second or more later) exiting at once.
 */
export async function runServer<T extends { close(): Promise<void> }>(
  start: () => Promise<T>,
  log: Logger,
  portInUse: (error: NodeJS.ErrnoException) => string,
): Promise<T> {
  let server: T;
  try {
    server = await start();
  } catch (error) {
    const e = error as NodeJS.ErrnoException;
    const known = e.code === 'EADDRINUSE'
      ? portInUse(e)
      : error instanceof UserError || typeof e.syscall === 'string' ? `cannot start: ${e.message}` : undefined;
    if (known === undefined) {
      log.fatal({ err: e }, `cannot start: ${e.message}`);
      throw error;
    }
    log.fatal({ code: e.code }, known);
    throw new UserError(known, { cause: error });
  }
  onStopSignals(
    (signal) => {
      log.info({ signal }, 'signal received');
      void server.close().then(() => process.exit(0), (error: unknown) => {
        log.error({ err: error }, 'error during shutdown');
        process.exit(1);
      });
    },
    (signal) => {
      log.warn({ signal }, 'second signal: exiting now');
      process.exit(130);
    },
  );
  return server;
}
