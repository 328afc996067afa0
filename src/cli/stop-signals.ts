/** A repeat of the stop signal this soon after the first is the same request, not "exit now". */
const SAME_REQUEST_MS = 1_000;

/**
 * Calls `stop` on the first of `signals` and `force` on one that comes a second or more later
 * (a second Ctrl-C when a graceful stop takes too long). A repeat within the second is ignored:
 * a terminal's Ctrl-C reaches every process of its group, so under a launcher that also forwards
 * signals to its child (`npm start`, svc's own bin/svc.js on an older Node, process managers)
 * one keypress arrives twice. Returns a function that removes the listeners.
 */
export function onStopSignals(
  stop: (signal: NodeJS.Signals) => void,
  force: (signal: NodeJS.Signals) => void,
  signals: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM'],
  now: () => number = () => performance.now(),
): () => void {
  let first: number | undefined;
  const listener = (signal: NodeJS.Signals) => {
    if (first === undefined) {
      first = now();
      stop(signal);
    } else if (now() - first >= SAME_REQUEST_MS) {
      force(signal);
    }
  };
  for (const signal of signals) process.on(signal, listener);
  return () => {
    for (const signal of signals) process.off(signal, listener);
  };
}
