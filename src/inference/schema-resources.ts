/**
 * Where a schema's `$ref`s lead: every `$id` (a resource, resolved against the one around it)
 * and `$anchor` inside the schema, indexed once, so a reference resolves as JSON Schema 2020-12
 * says — a URI relative to the base in effect, then a JSON pointer or an anchor inside that
 * resource. Nothing outside the schema is fetched: such a reference resolves to nothing.
 */
import { resolveJsonPointer } from './resolve-json-pointer.ts';

/** The base URI of a schema without `$id`: a private scheme no real reference can point into. */
export const DEFAULT_BASE = 'svc:/schema';

export interface SchemaAt {
  node: unknown;
  /** The base URI in effect at the node (its own `$id` applied). */
  base: string;
}

/** Keywords whose value is a schema, a list of schemas, or a map of them. */
const SCHEMA_KEYWORDS = ['additionalProperties', 'propertyNames', 'unevaluatedProperties', 'unevaluatedItems', 'items', 'additionalItems', 'contains', 'not', 'if', 'then', 'else', 'contentSchema'];
const LIST_KEYWORDS = ['prefixItems', 'allOf', 'anyOf', 'oneOf', 'items'];
const MAP_KEYWORDS = ['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas'];

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function withoutFragment(uri: string): string {
  const hash = uri.indexOf('#');
  return hash < 0 ? uri : uri.slice(0, hash);
}

/** `ref` resolved against `base`, or undefined when it is not a URI reference. */
function resolveUri(ref: string, base: string): string | undefined {
  try {
    return new URL(ref, base).href;
  } catch {
    return undefined;
  }
}

export class SchemaResources {
  readonly #resources = new Map<string, unknown>();
  readonly #anchors = new Map<string, unknown>();
  readonly #bases = new WeakMap<object, string>();

  constructor(root: unknown) {
    this.#index(root, DEFAULT_BASE, 0);
    if (!this.#resources.has(DEFAULT_BASE)) this.#resources.set(DEFAULT_BASE, root);
  }

  #index(node: unknown, base: string, depth: number): void {
    if (!isObject(node) || depth > 64) return;
    let here = base;
    if (typeof node.$id === 'string') {
      const id = resolveUri(node.$id, base);
      if (id !== undefined) {
        here = withoutFragment(id);
        if (!this.#resources.has(here)) this.#resources.set(here, node);
      }
    }
    if (depth === 0 && !this.#resources.has(DEFAULT_BASE)) this.#resources.set(DEFAULT_BASE, node);
    this.#bases.set(node, here);
    if (typeof node.$anchor === 'string') this.#anchors.set(`${here}#${node.$anchor}`, node);
    for (const k of SCHEMA_KEYWORDS) if (Object.hasOwn(node, k) && isObject(node[k])) this.#index(node[k], here, depth + 1);
    for (const k of LIST_KEYWORDS) {
      const list = Object.hasOwn(node, k) ? node[k] : undefined;
      if (Array.isArray(list)) for (const item of list) this.#index(item, here, depth + 1);
    }
    for (const k of MAP_KEYWORDS) {
      const map = Object.hasOwn(node, k) ? node[k] : undefined;
      if (isObject(map)) for (const sub of Object.values(map)) this.#index(sub, here, depth + 1);
    }
  }

  /** The base URI at a node of the schema (its own `$id` applied), or `fallback`. */
  baseOf(node: unknown, fallback: string): string {
    return isObject(node) ? (this.#bases.get(node) ?? fallback) : fallback;
  }

  /** What `ref` written under `base` points to, or undefined (outside the schema, or nothing). */
  resolve(ref: string, base: string): SchemaAt | undefined {
    const uri = resolveUri(ref, base);
    if (uri === undefined) return undefined;
    const docUri = withoutFragment(uri);
    const doc = this.#resources.get(docUri);
    if (doc === undefined) return undefined;
    const hash = uri.length > docUri.length ? uri.slice(docUri.length + 1) : '';
    let fragment: string;
    try {
      fragment = decodeURIComponent(hash);
    } catch {
      return undefined;
    }
    let node: unknown;
    if (fragment === '') node = doc;
    else if (fragment.startsWith('/')) node = resolveJsonPointer(doc, fragment);
    else node = this.#anchors.get(`${docUri}#${fragment}`);
    return node === undefined ? undefined : { node, base: this.baseOf(node, docUri) };
  }
}
