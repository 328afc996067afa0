/**
 * Whether the daemon answers, kept in one place for the whole console: api-client.ts reports
 * every call that reached it or could not, and a probe of `/health` (which needs no developer
 * key) runs in the background, every ONLINE_PROBE_MS while the daemon answers and with backoff
 * (1 s, 2 s, 4 s … up to OFFLINE_PROBE_MAX_MS) while it does not. The shell shows the banner and
 * greys the page; pages read `generation` to read their data again when the daemon comes back.
 */
import { useEffect, useState } from 'preact/hooks';

export interface ConnectionState {
  /** False from the first call that could not reach the daemon until one that did. */
  reachable: boolean;
  /** When the daemon last answered (ms since the epoch), or undefined before any answer. */
  lastAnswerAt: number | undefined;
  /** When the next probe runs while unreachable (ms since the epoch). */
  nextProbeAt: number | undefined;
  /** Counts the returns to reachable: a page whose data went stale reads it again when it changes. */
  generation: number;
}

const ONLINE_PROBE_MS = 5000;
const OFFLINE_PROBE_FIRST_MS = 1000;
const OFFLINE_PROBE_MAX_MS = 15_000;

let state: ConnectionState = { reachable: true, lastAnswerAt: undefined, nextProbeAt: undefined, generation: 0 };
const listeners = new Set<(s: ConnectionState) => void>();
let probeTimer: ReturnType<typeof setTimeout> | undefined;
let backoffMs = OFFLINE_PROBE_FIRST_MS;
let probeUrl: (() => string) | undefined;

function publish(next: ConnectionState): void {
  state = next;
  for (const listener of listeners) listener(state);
}

/** A call reached the daemon (any HTTP status: an error answer is still an answer). */
export function reportReachable(): void {
  const wasDown = !state.reachable;
  backoffMs = OFFLINE_PROBE_FIRST_MS;
  publish({ reachable: true, lastAnswerAt: Date.now(), nextProbeAt: undefined, generation: state.generation + (wasDown ? 1 : 0) });
  if (wasDown) schedule(ONLINE_PROBE_MS);
}

/** A call could not reach the daemon (refused, reset, no route): probe again soon, then less often. */
export function reportUnreachable(): void {
  if (!state.reachable) return;
  backoffMs = OFFLINE_PROBE_FIRST_MS;
  schedule(backoffMs);
  publish({ ...state, reachable: false, nextProbeAt: Date.now() + backoffMs });
}

export function connectionState(): ConnectionState {
  return state;
}

function schedule(delayMs: number): void {
  if (probeTimer !== undefined) clearTimeout(probeTimer);
  probeTimer = setTimeout(() => void probe(), delayMs);
}

async function probe(): Promise<void> {
  probeTimer = undefined;
  if (probeUrl === undefined) return;
  // A hidden tab probes nothing while the daemon answers; it looks again once shown.
  if (state.reachable && document.visibilityState !== 'visible') {
    schedule(ONLINE_PROBE_MS);
    return;
  }
  try {
    await fetch(probeUrl(), { headers: { accept: 'application/json' }, cache: 'no-store' });
    reportReachable();
    schedule(ONLINE_PROBE_MS);
  } catch {
    if (state.reachable) {
      reportUnreachable();
      return;
    }
    backoffMs = Math.min(backoffMs * 2, OFFLINE_PROBE_MAX_MS);
    schedule(backoffMs);
    publish({ ...state, nextProbeAt: Date.now() + backoffMs });
  }
}

/** Starts the background probe of `url()` (the shell calls this once). */
export function startConnectionProbe(url: () => string): void {
  if (probeUrl !== undefined) return;
  probeUrl = url;
  schedule(ONLINE_PROBE_MS);
}

/** Tries now (the banner's "Try now" button) instead of waiting out the backoff. */
export function probeNow(): void {
  schedule(0);
}

/** The connection state, re-rendering the component when it changes. */
export function useConnection(): ConnectionState {
  const [current, setCurrent] = useState(state);
  useEffect(() => {
    listeners.add(setCurrent);
    setCurrent(state);
    return () => { listeners.delete(setCurrent); };
  }, []);
  return current;
}
