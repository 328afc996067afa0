import type { FastifyInstance } from 'fastify';
import { ApiError } from '../shared/api-error.ts';
import { TelemetrySendError, type SentReport, type TelemetryReporter } from './telemetry-reporter.ts';

/** The least time between two sends asked for over HTTP (`POST /telemetry/send`). */
export const SEND_MIN_GAP_MS = 10_000;

/**
 * `GET /telemetry`: the mode, where reports go, when the last one went, and the payload a report
 * sent now would carry (what `svc telemetry send --dry-run` prints). `POST /telemetry/send`:
 * sends a report now (`svc telemetry send`); 409 when telemetry is none, 429 with Retry-After
 * within SEND_MIN_GAP_MS of the last one. Both are served on the
 * daemon's loopback listeners only, like everything else it serves.
 */
export async function telemetryRoutes(app: FastifyInstance, options: { reporter: TelemetryReporter; minGapMs?: number; now?: () => number }): Promise<void> {
  const { reporter } = options;
  const minGapMs = options.minGapMs ?? SEND_MIN_GAP_MS;
  const now = options.now ?? Date.now;
  // A send asked for while one is on its way gets that one's answer; one asked for within
  // minGapMs of the last is refused. Any page on another localhost port can POST here (a
  // simple request needs no CORS preflight), so it must not be able to make the daemon post
  // to the endpoint in a loop.
  let inFlight: Promise<SentReport> | undefined;
  let lastFinishedAt: number | undefined;
  app.get('/telemetry', async (_request, reply) => {
    reply.header('cache-control', 'no-store');
    return {
      mode: reporter.settings.mode,
      endpoint: reporter.shownEndpoint,
      interval_seconds: reporter.settings.mode === 'basic' ? Math.round(reporter.settings.intervalMs / 1000) : null,
      last_sent_at: reporter.lastSentAt,
      payload: reporter.payload(),
    };
  });
  app.post('/telemetry/send', async () => {
    if (reporter.settings.mode !== 'basic') {
      throw new ApiError({
        status: 409, type: 'invalid_request_error', code: 'telemetry_disabled',
        message: 'Telemetry is none: nothing is sent. Start the daemon with --telemetry basic --telemetry-endpoint <url> to send reports.',
      });
    }
    if (inFlight === undefined) {
      const waitMs = lastFinishedAt === undefined ? 0 : lastFinishedAt + minGapMs - now();
      if (waitMs > 0) {
        throw ApiError.busy(`A report was sent less than ${Math.round(minGapMs / 1000)} s ago; try again in ${Math.ceil(waitMs / 1000)} s.`, Math.ceil(waitMs / 1000), 429, 'telemetry_send_too_soon');
      }
      inFlight = reporter.send().finally(() => {
        inFlight = undefined;
        lastFinishedAt = now();
      });
    }
    try {
      return await inFlight;
    } catch (error) {
      if (!(error instanceof TelemetrySendError)) throw error;
      throw new ApiError({ status: 502, type: 'server_error', code: 'telemetry_send_failed', message: `The report to ${reporter.shownEndpoint} did not get through: ${error.message}.` });
    }
  });
}
