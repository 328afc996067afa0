import { setImmediate as nextTurn } from 'node:timers/promises';

/**
 * JSON text of `value` whose array at `key` (what makes an answer large: embeddings' `data`, a
 * batch's `results`) is serialized a slice at a time, the event loop free between slices.
 *
 * Why: JSON.stringify of a large answer is one synchronous call; 2,048 embeddings of 384
 * dimensions (4 MB of text) took 35–45 ms of it on the 2-core machine, with the rest of the
 * answer's work on top. Slices of about `sliceBytes` keep each turn to a millisecond or two and
 * give the same text JSON.stringify would (key order kept), so the answer is still one string
 * with a length and a digest (response signatures need both).
 */
export async function stringifyInSlices(value: object, key: string, sliceBytes = 64 * 1024): Promise<string> {
  const entries = Object.entries(value);
  const items: unknown = entries.find(([k]) => k === key)?.[1];
  if (!Array.isArray(items)) return JSON.stringify(value);
  const at = entries.findIndex(([k]) => k === key);
  // `{"a":1,` before the array and `,"b":2}` after it, as JSON.stringify writes them.
  const before = JSON.stringify(Object.fromEntries(entries.slice(0, at)));
  const after = JSON.stringify(Object.fromEntries(entries.slice(at + 1)));
  const parts: string[] = [`${before.slice(0, -1)}${before.length > 2 ? ',' : ''}${JSON.stringify(key)}:[`];
  let sliceStart = parts.length;
  let bytes = 0;
  for (let i = 0; i < items.length; i++) {
    // As JSON.stringify writes an array: `undefined` and functions become null.
    const text = JSON.stringify(items[i]) ?? 'null';
    parts.push(i === 0 ? text : `,${text}`);
    bytes += text.length;
    if (bytes >= sliceBytes && i < items.length - 1) {
      // Joined per slice, so the final join is over a few hundred strings, not thousands.
      parts.splice(sliceStart, parts.length - sliceStart, parts.slice(sliceStart).join(''));
      sliceStart = parts.length;
      bytes = 0;
      await nextTurn();
    }
  }
  parts.push(`]${after.length > 2 ? `,${after.slice(1)}` : '}'}`);
  return parts.join('');
}
