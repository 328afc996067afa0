import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { JobLog } from '../shared/job-log.ts';
import { JobLogFile } from './job-log-file.ts';
import { TelemetryReporter } from './telemetry-reporter.ts';
import { SEND_MIN_GAP_MS, telemetryRoutes } from './telemetry-routes.ts';
import type { TelemetrySettings } from './telemetry-settings.ts';

/** What telemetry needs of the daemon's logger. */
export interface TelemetryLog {
  info(message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
}

/**
 * Telemetry inside the daemon: the local job log (always), the `basic` reporter, the
 * `/telemetry` routes and the health fields. src/app/daemon.ts wires it in.
 */
export interface TelemetryRuntime {
  jobLog: JobLog;
  reporter: TelemetryReporter;
  /** `/telemetry` and `/telemetry/send` (mounted at the root, beside `/health`). */
  plugin(app: FastifyInstance): Promise<void>;
  /** Starts the daily reports (basic mode); call once the daemon listens. */
  start(): void;
  close(): Promise<void>;
}

export function openTelemetry(options: { dataDir: string; settings: TelemetrySettings; log: TelemetryLog }): TelemetryRuntime {
  const { log } = options;
  const jobLog = new JobLogFile({
    dir: join(options.dataDir, 'logs'),
    onWarning: (message, error) => log.warn({ err: error }, message),
    onRecovered: (message) => log.info(message),
  });
  const reporter = new TelemetryReporter({
    settings: options.settings,
    dailyJobCount: () => jobLog.dailyCount(),
    onWarning: (message) => log.warn({}, message),
    onSent: (message) => log.info(message),
  });
  return {
    jobLog,
    reporter,
    // With the interval knob shorter than the gap, the timer posts that often anyway.
    plugin: async (app) => { await app.register(telemetryRoutes, { reporter, minGapMs: Math.min(SEND_MIN_GAP_MS, options.settings.intervalMs) }); },
    start() {
      const endpoint = reporter.shownEndpoint;
      if (options.settings.mode === 'basic') log.info(`telemetry basic: uptime and the daily job count go to ${endpoint} every ${Math.round(options.settings.intervalMs / 1000)} s, the first one interval from now`);
      reporter.start();
    },
    async close() {
      reporter.close();
      await jobLog.close();
    },
  };
}
