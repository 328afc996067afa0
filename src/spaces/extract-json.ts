import { collapseWhitespace, pushBlock } from './block-text.ts';
import { documentUnreadable } from './extraction-errors.ts';
import type { DocumentBlock, ExtractedDocument } from './space-document.ts';

/**
 * JSON to lines `path.to.key: value`, one block per top-level entry, and one per record where
 * an array holds records (objects), so a chunk is a record and a citation points at one.
 * Nesting is bounded before parsing: flattening recurses, and a file of 100,000 `[` must be a
 * 422, not a stack overflow.
 */
export const MAX_JSON_DEPTH = 64;

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

export function extractJson(text: string): ExtractedDocument {
  const depth = nestingDepth(text);
  if (depth > MAX_JSON_DEPTH) throw documentUnreadable(`The JSON file nests ${depth} levels deep; at most ${MAX_JSON_DEPTH} are read.`);
  let value: Json;
  try {
    // JSON.parse makes `__proto__` an own data property, never a prototype: keys are only read.
    value = JSON.parse(text) as Json;
  } catch (error) {
    throw documentUnreadable(`The JSON file cannot be parsed: ${error instanceof Error ? error.message : String(error)}`, error);
  }
  const blocks: DocumentBlock[] = [];
  if (Array.isArray(value)) entryBlocks('', value, blocks, true);
  else if (isObject(value)) {
    for (const [key, entry] of Object.entries(value)) entryBlocks(keyPath('', key), entry, blocks, false);
  } else pushBlock(blocks, { kind: 'paragraph', text: scalar(value) });
  return { format: 'json', blocks };
}

/** One block for a top-level entry, or one per record when the entry is an array of records. */
function entryBlocks(path: string, value: Json, blocks: DocumentBlock[], topLevelArray: boolean): void {
  if (Array.isArray(value) && value.some((item) => isObject(item) || Array.isArray(item))) {
    value.forEach((item, i) => {
      // A record of a top-level array reads best from its own keys (`name: Ada`); under a key it keeps the key.
      const lines: string[] = [];
      flatten(topLevelArray ? '' : `${path}[${i}]`, item, lines);
      pushBlock(blocks, { kind: 'list', text: lines.join('\n') });
    });
    return;
  }
  const lines: string[] = [];
  flatten(path, value, lines);
  pushBlock(blocks, { kind: 'list', text: lines.join('\n') });
}

function flatten(path: string, value: Json, lines: string[]): void {
  if (Array.isArray(value)) {
    if (value.length === 0) lines.push(`${path || '(root)'}: []`);
    value.forEach((item, i) => flatten(`${path}[${i}]`, item, lines));
  } else if (isObject(value)) {
    const entries = Object.entries(value);
    if (entries.length === 0) lines.push(`${path || '(root)'}: {}`);
    for (const [key, item] of entries) flatten(keyPath(path, key), item, lines);
  } else lines.push(path === '' ? scalar(value) : `${path}: ${scalar(value)}`);
}

function keyPath(path: string, key: string): string {
  if (/^[\p{L}_$][\p{L}\p{N}_$-]*$/u.test(key)) return path === '' ? key : `${path}.${key}`;
  return `${path}[${JSON.stringify(key)}]`;
}

function scalar(value: null | boolean | number | string): string {
  return typeof value === 'string' ? collapseWhitespace(value) : String(value);
}

function isObject(value: Json): value is { [key: string]: Json } {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The deepest nesting of `[` and `{` outside strings (a linear scan, no recursion). */
function nestingDepth(text: string): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) deepest = Math.max(deepest, ++depth);
    else if (c === 0x5d || c === 0x7d) depth--;
  }
  return deepest;
}
