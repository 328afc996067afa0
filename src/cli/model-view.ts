import { modelCapabilities, parameterSize } from '../models/model-capabilities.ts';
import type { LocalModel } from '../models/model-discovery.ts';

/**
 * One model as `svc models list|ps|info --json` print it, whether a daemon or the disk said so.
 * The names are the daemon's `/v1/models` fields, so a script reads the same keys either way.
 */
export interface ModelView {
  id: string;
  source: string | null;
  path: string | null;
  size_bytes: number | null;
  arch: string | null;
  parameter_count: number | null;
  parameter_size: string | null;
  quantization: string | null;
  max_context_length: number | null;
  embedding_length: number | null;
  capabilities: string[];
  /** `loaded` / `not-loaded` as the daemon says; null when read from disk (no daemon to ask). */
  state: string | null;
}

const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);
const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);

/** A daemon's model object; fields it does not send are null. */
export function viewFromDaemon(m: Record<string, unknown>, loaded?: ReadonlySet<string>): ModelView {
  const id = str(m.id) ?? '';
  const state = str(m.state) ?? (loaded === undefined ? null : loaded.has(id) ? 'loaded' : 'not-loaded');
  return {
    id,
    source: str(m.source),
    path: str(m.path),
    size_bytes: num(m.size_bytes),
    arch: str(m.arch),
    parameter_count: num(m.parameter_count),
    parameter_size: str(m.parameter_size),
    quantization: str(m.quantization),
    max_context_length: num(m.max_context_length),
    embedding_length: num(m.embedding_length),
    capabilities: Array.isArray(m.capabilities) ? m.capabilities.filter((c): c is string => typeof c === 'string') : [],
    state,
  };
}

export function viewFromDisk(m: LocalModel): ModelView {
  return {
    id: m.id,
    source: m.source,
    path: m.path,
    size_bytes: m.sizeBytes,
    arch: m.gguf.architecture,
    parameter_count: m.gguf.parameterCount > 0 ? m.gguf.parameterCount : null,
    parameter_size: parameterSize(m.gguf),
    quantization: m.gguf.quantization,
    max_context_length: m.gguf.contextLength,
    embedding_length: m.gguf.embeddingLength,
    capabilities: modelCapabilities(m.gguf),
    state: null,
  };
}

export function formatSize(bytes: number | null): string {
  if (bytes === null) return '-';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return unit === 0 ? `${value} B` : `${value.toFixed(1)} ${units[unit]}`;
}

/** Names come from file systems and other tools' stores: control characters are shown as '?'. */
export function printable(text: string): string {
  return text.replace(/[\u0000-\u001f\u007f-\u009f]/g, '?');
}

/** Aligned columns; the last column is not padded. */
export function formatTable(header: readonly string[], rows: readonly (readonly string[])[], rightAligned: ReadonlySet<number> = new Set()): string {
  const cells = rows.map((r) => r.map(printable));
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((r) => r[i]!.length)));
  const line = (row: readonly string[]) => row
    .map((c, i) => (i === row.length - 1 ? c : rightAligned.has(i) ? c.padStart(widths[i]!) : c.padEnd(widths[i]!)))
    .join('  ');
  return `${[line(header), ...cells.map(line)].join('\n')}\n`;
}

export function modelTable(models: readonly ModelView[], withState: boolean): string {
  const header = ['ID', 'SIZE', 'PARAMS', 'QUANT', 'CONTEXT', 'SOURCE', ...(withState ? ['STATE'] : [])];
  const rows = models.map((m) => [
    m.id,
    formatSize(m.size_bytes),
    m.parameter_size ?? '-',
    m.quantization ?? '-',
    m.max_context_length === null ? '-' : String(m.max_context_length),
    m.source ?? '-',
    ...(withState ? [m.state ?? '-'] : []),
  ]);
  return formatTable(header, rows, new Set([1, 4]));
}

/** `svc models info`: one field a line. */
export function modelDetails(m: ModelView): string {
  const rows: [string, string][] = [
    ['id', m.id],
    ['source', m.source ?? '-'],
    ['path', m.path ?? '-'],
    ['size', m.size_bytes === null ? '-' : `${formatSize(m.size_bytes)} (${m.size_bytes} bytes)`],
    ['architecture', m.arch ?? '-'],
    ['parameters', m.parameter_size === null ? '-' : m.parameter_count === null ? m.parameter_size : `${m.parameter_size} (${m.parameter_count})`],
    ['quantization', m.quantization ?? '-'],
    ['context length', m.max_context_length === null ? '-' : String(m.max_context_length)],
    ['embedding length', m.embedding_length === null ? '-' : String(m.embedding_length)],
    ['capabilities', m.capabilities.length === 0 ? '-' : m.capabilities.join(', ')],
    ['state', m.state ?? 'no daemon running'],
  ];
  const width = Math.max(...rows.map(([k]) => k.length));
  return rows.map(([k, v]) => `${k.padEnd(width)}  ${printable(v)}\n`).join('');
}
