import { Secret } from '../../shared/secret.ts';
import { parseDuration } from '../../shared/config-values.ts';
import { DEFAULT_HARDWARE_DEADLINE_MS, ProviderHardware } from './hardware-substrate.ts';
import { RuntimeSamplerClient } from './runtime-sampler-client.ts';

/** The environment variable the provider's bearer token is read from (never a flag: flags show in `ps`). */
export const QUANTUM_TOKEN_ENV = 'SVC_QUANTUM_TOKEN';

/** `--quantum-*` as the CLI hands them over (flags or their SVC_QUANTUM_* variables). */
export interface RawHardwareOptions {
  quantumProvider?: string | undefined;
  quantumBackend?: string | undefined;
  quantumInstance?: string | undefined;
  quantumApiVersion?: string | undefined;
  quantumTimeout?: string | undefined;
  quantumDeadline?: string | undefined;
  quantumPoll?: string | undefined;
}

/** The hardware provider, when one is configured: opt-in, so no outbound connection without it. */
export interface HardwareConfig {
  providerUrl: string;
  backend: string;
  instance: string | undefined;
  apiVersion: string | undefined;
  /** One provider job: submit, provider queue, run, results (`--quantum-timeout`). */
  timeoutMs: number;
  /** One hardware solve or batch item, lane wait and local solve included (`--quantum-deadline`). */
  deadlineMs: number;
  pollMs: number;
}

/** Checks the flags; throws an Error whose message is one line for the CLI (the caller wraps it in its ConfigError). */
export function resolveHardwareConfig(raw: RawHardwareOptions): HardwareConfig | undefined {
  const provider = raw.quantumProvider?.trim() ?? '';
  const backend = raw.quantumBackend?.trim() ?? '';
  if (provider === '') {
    if (backend !== '') throw new Error('--quantum-backend needs --quantum-provider (the job API URL, e.g. https://quantum.cloud.ibm.com/api/v1).');
    return undefined;
  }
  let url: URL;
  try {
    url = new URL(provider);
  } catch {
    throw new Error(`--quantum-provider: '${provider}' is not a URL (e.g. https://quantum.cloud.ibm.com/api/v1).`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new Error(`--quantum-provider: '${provider}' must be an http(s) URL.`);
  if (url.username !== '' || url.password !== '') throw new Error(`--quantum-provider: put no credentials in the URL; the token goes in ${QUANTUM_TOKEN_ENV}.`);
  if (backend === '') throw new Error('--quantum-provider needs --quantum-backend: the backend to run on, e.g. ibm_brisbane.');
  const timeoutMs = parseDuration(raw.quantumTimeout ?? '10m', '--quantum-timeout');
  const deadlineMs = raw.quantumDeadline === undefined ? DEFAULT_HARDWARE_DEADLINE_MS : parseDuration(raw.quantumDeadline, '--quantum-deadline');
  const pollMs = parseDuration(raw.quantumPoll ?? '2s', '--quantum-poll');
  if (!(timeoutMs >= 100) || !Number.isFinite(timeoutMs)) throw new Error(`--quantum-timeout: '${raw.quantumTimeout}' must be a finite duration of at least 100ms.`);
  // Timers past 2^31-1 ms (24.8 days) fire at once in Node; a day is already far past any HTTP client's patience.
  if (!(deadlineMs >= 100 && deadlineMs <= 86_400_000)) throw new Error(`--quantum-deadline: '${raw.quantumDeadline}' must be a duration from 100ms to 24h.`);
  if (!(pollMs >= 10) || !Number.isFinite(pollMs)) throw new Error(`--quantum-poll: '${raw.quantumPoll}' must be a finite duration of at least 10ms.`);
  const optional = (v: string | undefined): string | undefined => (v === undefined || v.trim() === '' ? undefined : v.trim());
  return { providerUrl: url.href.replace(/\/+$/, ''), backend, instance: optional(raw.quantumInstance), apiVersion: optional(raw.quantumApiVersion), timeoutMs, deadlineMs, pollMs };
}

/** The `vendor-eagle` substrate for a daemon: 503 naming what is missing, unless provider, backend and token are all there. Takes the token out of `env`. */
export function createHardwareSubstrate(config: HardwareConfig | undefined, env: NodeJS.ProcessEnv = process.env): ProviderHardware {
  const token = env[QUANTUM_TOKEN_ENV];
  // Read once and gone: worker threads and child processes copy process.env, and none of them needs the token.
  delete env[QUANTUM_TOKEN_ENV];
  if (config === undefined) return new ProviderHardware({ client: undefined });
  if (token === undefined || token === '') {
    return new ProviderHardware({ client: undefined, missing: `a hardware provider is configured but ${QUANTUM_TOKEN_ENV} (its token) is not set` });
  }
  return new ProviderHardware({
    deadlineMs: config.deadlineMs,
    client: new RuntimeSamplerClient({
      baseUrl: config.providerUrl, backend: config.backend, token: new Secret(token), tokenEnv: QUANTUM_TOKEN_ENV,
      instance: config.instance, apiVersion: config.apiVersion, timeoutMs: config.timeoutMs, pollMs: config.pollMs,
    }),
  });
}
