/** Display helpers shared by the pages. */

export function formatBytes(bytes: number | null | undefined): string {
  if (bytes === null || bytes === undefined) return '—';
  const units = ['B', 'KB', 'MB', 'GB', 'TB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1000 && unit < units.length - 1) {
    value /= 1000;
    unit++;
  }
  return `${value >= 100 || unit === 0 ? Math.round(value) : value.toFixed(1)} ${units[unit]}`;
}

/** A health value of any shape as short text: objects as compact JSON, absent as a dash. */
export function formatValue(value: unknown): string {
  if (value === undefined || value === null) return '—';
  if (typeof value === 'string') return value === '' ? '—' : value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value) && value.length === 0) return 'none';
  return JSON.stringify(value);
}

export function formatNumber(value: number | null | undefined, digits = 1): string {
  return value === null || value === undefined || !Number.isFinite(value) ? '—' : value.toFixed(digits);
}

/** "1 thread", "4 threads": a count and its noun, the plural by adding s (every noun the console counts takes one). */
export function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}

/**
 * A moment as "2026-11-28 15:04 UTC": always UTC and always said, so a date read on a
 * screenshot, in a bug report or from another time zone means the same minute
 * (docs/console.md). Text that is not a date is shown as it is.
 */
export function formatTimestamp(iso: string): string {
  const time = Date.parse(iso);
  if (Number.isNaN(time)) return iso;
  return `${new Date(time).toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

/**
 * A solver's figure as people read it: at most `digits` decimals (trailing zeros dropped), with
 * thousands separators; 117.14152222567635 → "117.14". Tiny non-zero values keep two significant
 * digits rather than reading as 0 (0.000123 → "0.00012"). The exact value stays in the raw JSON.
 */
export function formatFigure(value: number | null | undefined, digits = 2): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return '—';
  if (value !== 0 && Math.abs(value) < 10 ** -digits) return Number(value.toPrecision(2)).toString();
  return value.toLocaleString('en-US', { maximumFractionDigits: digits });
}

/** A share (0–1) as a percentage with one decimal: 0.6834 → "68.3 %"; a non-zero share under 0.05 % stays visible ("< 0.1 %"). */
export function formatPercent(share: number | null | undefined): string {
  if (share === null || share === undefined || !Number.isFinite(share)) return '—';
  if (share > 0 && share < 0.0005) return '< 0.1 %';
  return `${(share * 100).toFixed(1)} %`;
}

/** A count of things (shots, circuits, iterations): an integer with thousands separators. */
export function formatCount(value: number | null | undefined): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return '—';
  return Math.round(value).toLocaleString('en-US');
}
