// The house rules of docs/architecture.md, checked over the code's own imports so they stay
// true as the code grows: which room may import which, no import circle of any kind (type-only
// imports included), and no source file over 450 lines without a reason written at its top.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { test } from 'node:test';
import ts from 'typescript';

const ROOT = resolve(import.meta.dirname, '..');
const SRC = join(ROOT, 'src');

/**
 * The rooms under src/ and the rooms each may import (besides itself). Lowest first: a room
 * names only rooms above it in this list, so no room can import a room that imports it.
 * Changing this table is changing the architecture: update docs/architecture.md with it.
 */
const ROOMS = new Map<string, readonly string[]>([
  ['shared', []],
  ['models', ['shared']],
  ['telemetry', ['shared']],
  ['quantum', ['shared']],
  ['http', ['shared']],
  ['transport', ['shared', 'http']],
  ['inference', ['shared', 'models']],
  ['spaces', ['shared', 'inference']],
  ['openai', ['shared', 'http', 'inference']],
  ['anthropic', ['shared', 'http', 'inference', 'openai']],
  ['accounts', ['shared']],
  ['mcp', ['shared', 'http', 'openai', 'inference', 'spaces', 'quantum']],
  ['console', ['shared']],
  ['runtime', ['shared', 'http', 'openai', 'anthropic', 'inference', 'models', 'spaces', 'quantum', 'mcp', 'accounts', 'transport', 'telemetry', 'console']],
  ['hosted', ['shared', 'http', 'openai', 'anthropic', 'inference', 'models', 'spaces', 'quantum', 'accounts', 'transport', 'telemetry', 'console']],
  ['app', ['shared', 'http', 'openai', 'anthropic', 'inference', 'models', 'spaces', 'quantum', 'mcp', 'accounts', 'transport', 'telemetry', 'console', 'runtime', 'hosted']],
  ['cli', ['shared', 'http', 'openai', 'anthropic', 'inference', 'models', 'spaces', 'quantum', 'mcp', 'accounts', 'transport', 'telemetry', 'console', 'runtime', 'hosted', 'app']],
]);

const MAX_LINES = 450;

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== 'dist') out.push(...sourceFiles(path));
    } else if (/\.tsx?$/.test(entry.name) && !entry.name.endsWith('.as.ts')) {
      out.push(path);
    }
  }
  return out;
}

const files = sourceFiles(SRC);
const known = new Set(files);

/** Every relative import of a file (static, `import type`, re-exports and dynamic imports), resolved to a path. */
function importsOf(file: string): string[] {
  const info = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
  return info.importedFiles.map((f) => f.fileName).filter((name) => name.startsWith('.')).map((name) => resolve(dirname(file), name));
}

const graph = new Map(files.map((file) => [file, importsOf(file).filter((target) => known.has(target))]));
const roomOf = (file: string): string => relative(SRC, file).split('/')[0] ?? '';
const show = (file: string): string => relative(SRC, file);

test('every folder under src/ is a room with a place in the table', () => {
  const rooms = new Set(files.map(roomOf).filter((room) => !room.endsWith('.ts')));
  for (const room of rooms) assert.ok(ROOMS.has(room), `src/${room}/ is not in the room table of test/architecture.test.ts (and docs/architecture.md)`);
  for (const [room, allowed] of ROOMS) {
    const index = [...ROOMS.keys()].indexOf(room);
    for (const below of allowed) assert.ok([...ROOMS.keys()].indexOf(below) < index, `${room} may import ${below}, which must come before it in the table`);
  }
});

test('a room imports only the rooms below it', () => {
  const wrong: string[] = [];
  for (const [file, targets] of graph) {
    const from = roomOf(file);
    const allowed = ROOMS.get(from) ?? [];
    for (const target of targets) {
      const to = roomOf(target);
      if (to !== from && !allowed.includes(to)) wrong.push(`${show(file)} → ${show(target)} (${from} may not import ${to})`);
    }
  }
  assert.deepEqual(wrong, []);
});

test('no import circle between files, type-only imports included', () => {
  // Tarjan's strongly connected components: any component of more than one file is a circle.
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const circles: string[][] = [];
  const visit = (file: string): void => {
    index.set(file, counter);
    low.set(file, counter);
    counter += 1;
    stack.push(file);
    onStack.add(file);
    for (const target of graph.get(file) ?? []) {
      if (!index.has(target)) {
        visit(target);
        low.set(file, Math.min(low.get(file)!, low.get(target)!));
      } else if (onStack.has(target)) {
        low.set(file, Math.min(low.get(file)!, index.get(target)!));
      }
    }
    if (low.get(file) === index.get(file)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(show(member));
      } while (member !== file);
      if (component.length > 1 || (graph.get(file) ?? []).includes(file)) circles.push(component.sort());
    }
  };
  for (const file of files) if (!index.has(file)) visit(file);
  assert.deepEqual(circles, []);
});

test(`no source file over ${MAX_LINES} lines unless its first five lines say why ("Long because")`, () => {
  const long: string[] = [];
  for (const file of files) {
    const lines = readFileSync(file, 'utf8').split('\n');
    const count = lines.at(-1) === '' ? lines.length - 1 : lines.length;
    if (count > MAX_LINES && !lines.slice(0, 5).some((line) => line.includes('Long because'))) long.push(`${show(file)} (${count} lines)`);
  }
  assert.deepEqual(long, []);
});

test('the checks see the code: the graph has the imports a known file makes', () => {
  // Guards against a resolver change that would make every check above pass on an empty graph.
  const chat = join(SRC, 'runtime', 'chat-completions-route.ts');
  assert.ok((graph.get(chat) ?? []).some((target) => roomOf(target) === 'openai'));
  assert.ok(files.length > 200);
});
