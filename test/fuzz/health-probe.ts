/**
 * Polls `GET /health` from a worker thread while a fuzz or bench runs, and times each answer.
 * It runs in its own thread so that building multi-megabyte bodies on the caller's event loop
 * does not show up as daemon latency: what it measures is the daemon's.
 */
import { get } from 'node:http';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';

export interface HealthSample {
  /** ms since the probe started. */
  at: number;
  ms: number;
  /** HTTP status; 0 when the request failed. */
  status: number;
  error?: string;
}

export interface HealthReport {
  samples: HealthSample[];
  /** How long the check still in flight at stop time had been waiting (0 if none). */
  inFlightMs: number;
}

export interface HealthProbe {
  stop(): Promise<HealthReport>;
}

interface ProbeData {
  svcHealthProbe: true;
  urls: string[];
  intervalMs: number;
}

/** Starts polling every `intervalMs`, alternating between the daemon's listening URLs. */
export function startHealthProbe(urls: string[], intervalMs = 50): HealthProbe {
  const worker = new Worker(new URL(import.meta.url), { workerData: { svcHealthProbe: true, urls, intervalMs } satisfies ProbeData });
  worker.unref();
  return {
    stop: () =>
      new Promise<HealthReport>((resolve, reject) => {
        worker.once('message', (report: HealthReport) => {
          resolve(report);
          void worker.terminate();
        });
        worker.once('error', reject);
        worker.postMessage('stop');
      }),
  };
}

/** p-th percentile (nearest rank) of `values`. */
export function percentile(values: number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

function runProbe(data: ProbeData): void {
  const samples: HealthSample[] = [];
  const origin = performance.now();
  let inFlightSince: number | null = null;
  let stopped = false;
  let next = 0;

  const once = (): void => {
    if (stopped) return;
    const url = data.urls[next++ % data.urls.length]!;
    const started = performance.now();
    inFlightSince = started;
    const done = (status: number, error?: string): void => {
      if (inFlightSince !== started) return;
      inFlightSince = null;
      samples.push({ at: started - origin, ms: performance.now() - started, status, ...(error === undefined ? {} : { error }) });
      setTimeout(once, data.intervalMs);
    };
    const req = get(`${url}/health`, { agent: false }, (res) => {
      res.resume();
      res.on('end', () => done(res.statusCode ?? 0));
      res.on('error', (e) => done(0, e.message));
    });
    req.on('error', (e) => done(0, e.message));
  };

  parentPort!.on('message', () => {
    stopped = true;
    parentPort!.postMessage({ samples, inFlightMs: inFlightSince === null ? 0 : performance.now() - inFlightSince } satisfies HealthReport);
  });
  once();
}

if (!isMainThread && (workerData as Partial<ProbeData> | null)?.svcHealthProbe === true) runProbe(workerData as ProbeData);
