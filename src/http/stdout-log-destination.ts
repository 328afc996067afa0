import pino from 'pino';

/** The most log text held while stdout cannot take it; beyond it lines are dropped, not buffered. */
const MAX_BUFFERED_LOG_BYTES = 8 * 1024 * 1024;

/**
 * Where `svc serve` writes its log: stdout, asynchronously.
 *
 * pino's default destination writes synchronously, and when stdout is a pipe whose reader lags
 * (a terminal paused, a slow log shipper, a parent process busy elsewhere) the write fails with
 * EAGAIN and it sleeps 100 ms on the event loop before retrying (sonic-boom's busy-write wait):
 * every request waits. Measured in bench:reliability, whose harness reads the daemon's stdout on
 * a busy thread: held stalls of 50–100 ms with almost no CPU. Written asynchronously, a lagging
 * reader costs memory instead, up to MAX_BUFFERED_LOG_BYTES, then dropped lines; what is
 * buffered is flushed when the process exits (pino registers that).
 */
export function stdoutLogDestination(): pino.DestinationStream {
  return pino.destination({ dest: 1, sync: false, maxLength: MAX_BUFFERED_LOG_BYTES });
}
