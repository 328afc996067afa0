/**
 * A JSON Pointer (RFC 6901, `/a/b~1c`) resolved against a parsed JSON value, or undefined when
 * it points to nothing. Own properties only, so a client's pointer never reaches
 * Object.prototype (`/constructor`).
 */
export function resolveJsonPointer(root: unknown, pointer: string): unknown {
  if (pointer === '') return root;
  let node: unknown = root;
  for (const raw of pointer.slice(1).split('/')) {
    const key = raw.replaceAll('~1', '/').replaceAll('~0', '~');
    if (Array.isArray(node)) {
      if (!/^(0|[1-9][0-9]*)$/.test(key)) return undefined;
      node = node[Number(key)];
    } else if (typeof node === 'object' && node !== null && Object.hasOwn(node, key)) {
      node = (node as Record<string, unknown>)[key];
    } else {
      return undefined;
    }
  }
  return node;
}
