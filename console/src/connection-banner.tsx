import { useEffect, useState } from 'preact/hooks';
import { UNREACHABLE_MESSAGE } from './api-client.ts';
import { probeNow, useConnection } from './connection-state.ts';

/** A clock time in UTC with its zone said, as the rest of the console shows times. */
function clock(ms: number): string {
  return `${new Date(ms).toISOString().slice(11, 19)} UTC`;
}

/**
 * The one place every page says the daemon is not answering: what is shown below is from
 * before (when it last answered), the console keeps trying by itself, and a button tries now.
 */
export function ConnectionBanner() {
  const connection = useConnection();
  // Re-render each second so "trying again in N s" counts down.
  const [, tick] = useState(0);
  useEffect(() => {
    if (connection.reachable) return undefined;
    const timer = setInterval(() => tick((n) => n + 1), 1000);
    return () => clearInterval(timer);
  }, [connection.reachable]);
  if (connection.reachable) return null;
  const wait = connection.nextProbeAt === undefined ? undefined : Math.max(0, Math.ceil((connection.nextProbeAt - Date.now()) / 1000));
  return (
    <div class="connection-banner" id="connection-banner">
      <p role="alert">
        <strong>{UNREACHABLE_MESSAGE}</strong>{' '}
        {connection.lastAnswerAt === undefined ? 'Nothing has been read from it yet.' : `What this page shows is from ${clock(connection.lastAnswerAt)}, when it last answered, and may be out of date.`}
      </p>
      <p>
        <span id="connection-retry-in">{wait === undefined || wait === 0 ? 'Trying again…' : `Trying again in ${wait} s.`}</span>{' '}
        <button type="button" class="small" id="connection-retry" onClick={probeNow}>Try now</button>
      </p>
    </div>
  );
}
