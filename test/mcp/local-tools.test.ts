/** The tools' input schemas on their own: what the SDK checks before a handler runs (stdio included). */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { LOCAL_TOOLS } from '../../src/mcp/local-tools.ts';
import { TOOL_NAMES } from '../../src/mcp/tool-names.ts';

const schemaOf = (name: string): { safeParse: (value: unknown) => { success: boolean; error?: { message: string } } } => {
  const tool = LOCAL_TOOLS.find((t) => t.name === name);
  assert.ok(tool !== undefined, name);
  return tool.inputSchema;
};

test('an own __proto__ metadata key in a search filter is refused, not dropped (which would widen the filter)', () => {
  const filter = { metadata: JSON.parse('{"__proto__":"x","kind":"manual"}') as unknown };
  for (const [name, args] of [[TOOL_NAMES.searchSpace, { space: 'notes', query: 'x', filter }], [TOOL_NAMES.searchSpaces, { query: 'x', filter }]] as const) {
    const parsed = schemaOf(name).safeParse(args);
    assert.equal(parsed.success, false, name);
    assert.match(parsed.error?.message ?? '', /__proto__/);
    // The same filter without it is fine.
    assert.equal(schemaOf(name).safeParse({ ...args, filter: { metadata: { kind: 'manual' } } }).success, true, name);
  }
});
