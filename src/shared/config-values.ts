import { UserError } from './user-error.ts';

/** A flag or environment value the daemon cannot use; the CLI exits 2 with its message. */
export class ConfigError extends UserError {
  override name = 'ConfigError';
  constructor(message: string) {
    super(message, { exitCode: 2 });
  }
}

/**
 * Durations as Ollama's keep_alive takes them: `300`, `30s`, `5m`, `1h`, `500ms`; `0` means
 * "right away"; a negative value or `forever` means never.
 */
export function parseDuration(value: string, what: string): number {
  const text = value.trim().toLowerCase();
  if (text === 'forever' || text === 'inf' || /^-\d+(\.\d+)?[a-z]*$/.test(text)) return Number.POSITIVE_INFINITY;
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)?$/.exec(text);
  if (match === null) throw new ConfigError(`${what}: '${value}' is not a duration (try 30s, 5m, 1h, 0 or forever).`);
  const n = Number(match[1]);
  const unit = match[2] ?? 's';
  return n * { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[unit as 'ms' | 's' | 'm' | 'h' | 'd'];
}

/** Byte sizes: `1048576`, `512kb`, `16mb`, `1gb`. */
export function parseBytes(value: string, what: string): number {
  const match = /^(\d+(?:\.\d+)?)\s*(b|kb|k|mb|m|gb|g)?$/i.exec(value.trim());
  if (match === null) throw new ConfigError(`${what}: '${value}' is not a size (try 16mb).`);
  const unit = (match[2] ?? 'b').toLowerCase()[0] as 'b' | 'k' | 'm' | 'g';
  return Math.floor(Number(match[1]) * { b: 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3 }[unit]);
}
