/** A JSON object: not null, not an array (JSON.parse output and answers from other processes). */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
