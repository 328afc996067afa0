import type { FastifyInstance } from 'fastify';
import { ApiError } from '../shared/api-error.ts';
import { TelemetrySendError, type TelemetryReporter } from './telemetry-reporter.ts';

/**
 * `GET /telemetry`: the mode, where reports go, when the last one went, and the payload a report
 * sent now would carry (what `svc telemetry send --dry-run` prints). `POST /telemetry/send`:
 * sends a report now (`svc telemetry send`); 409 when telemetry is none. Both are served on the
 * daemon's loopback listeners only, like everything else it serves.
 */
export async function telemetryRoutes(app: FastifyInstance, options: { reporter: TelemetryReporter }): Promise<void> {
  const { reporter } = options;
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
    try {
      return await reporter.send();
    } catch (error) {
      if (!(error instanceof TelemetrySendError)) throw error;
      throw new ApiError({ status: 502, type: 'server_error', code: 'telemetry_send_failed', message: `The report to ${reporter.shownEndpoint} did not get through: ${error.message}.` });
    }
  });
}
