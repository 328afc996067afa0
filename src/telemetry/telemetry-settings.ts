import { DAY_MS } from './recent-job-count.ts';

/**
 * `--telemetry` (config `telemetry`): `none` sends nothing; `basic` sends uptime and the
 * daily job count to `--telemetry-endpoint` once a day. The job log is written in both modes.
 */
export const TELEMETRY_MODES = ['none', 'basic'] as const;
export type TelemetryMode = (typeof TELEMETRY_MODES)[number];

export interface TelemetrySettings {
  mode: TelemetryMode;
  /** Where `basic` reports go (http or https); set whenever the mode is basic. */
  endpoint: URL | undefined;
  /** Between reports; the first goes one interval after start. A day, unless SVC_TELEMETRY_INTERVAL_MS (a testing knob) says otherwise. */
  intervalMs: number;
}

/** A telemetry flag the daemon cannot use; runtime-config.ts turns it into its ConfigError. */
export class TelemetryConfigError extends Error {}

/** The shortest interval the testing knob takes: a report needs a moment to go out. */
const MIN_INTERVAL_MS = 100;

export function resolveTelemetrySettings(raw: { telemetry?: string | undefined; telemetryEndpoint?: string | undefined }, env: NodeJS.ProcessEnv): TelemetrySettings {
  const mode = (raw.telemetry ?? 'none').trim().toLowerCase();
  if (!(TELEMETRY_MODES as readonly string[]).includes(mode)) {
    throw new TelemetryConfigError(`--telemetry ${raw.telemetry}: not one of ${TELEMETRY_MODES.join(', ')}.`);
  }
  const text = raw.telemetryEndpoint?.trim() ?? '';
  let endpoint: URL | undefined;
  if (text !== '') {
    try {
      endpoint = new URL(text);
    } catch {
      throw new TelemetryConfigError(`--telemetry-endpoint ${text}: not a URL (try https://telemetry.example.com/svc).`);
    }
    if (endpoint.protocol !== 'http:' && endpoint.protocol !== 'https:') {
      throw new TelemetryConfigError(`--telemetry-endpoint ${shownEndpoint(endpoint)}: only http:// and https:// endpoints are supported.`);
    }
    // node:http decodes the user info for basic authentication and throws URIError on a bad
    // escape (`a%zz`), which new URL lets through: refuse it here rather than at the first send.
    try {
      decodeURIComponent(endpoint.username);
      decodeURIComponent(endpoint.password);
    } catch {
      // Shown without the user info: it is a credential.
      throw new TelemetryConfigError(`--telemetry-endpoint ${shownEndpoint(endpoint)}: the user or password has a bad %-escape (write a literal % as %25).`);
    }
  }
  if (mode === 'basic' && endpoint === undefined) {
    throw new TelemetryConfigError(
      '--telemetry basic needs --telemetry-endpoint <url> (config telemetry_endpoint, env SVC_TELEMETRY_ENDPOINT): svc has no endpoint of its own to send to.',
    );
  }
  const knob = env['SVC_TELEMETRY_INTERVAL_MS']?.trim() ?? '';
  let intervalMs = DAY_MS;
  if (knob !== '') {
    intervalMs = Number(knob);
    if (!Number.isInteger(intervalMs) || intervalMs < MIN_INTERVAL_MS || intervalMs > 2 ** 31 - 1) {
      throw new TelemetryConfigError(`SVC_TELEMETRY_INTERVAL_MS: '${knob}' must be a whole number of milliseconds from ${MIN_INTERVAL_MS} to ${2 ** 31 - 1}.`);
    }
  }
  return { mode: mode as TelemetryMode, endpoint, intervalMs };
}

/** The endpoint as shown in health, logs and `svc telemetry`: no user info, query or fragment (they may carry a token). */
export function shownEndpoint(endpoint: URL): string {
  return `${endpoint.origin}${endpoint.pathname}`;
}
