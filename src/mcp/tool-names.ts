/**
 * The names of svc's local-context tools, shared by the MCP server, `/openai-tools` and the
 * privacy rule that keeps their inputs and results away from remote models. Valid OpenAI function
 * names (letters, digits, `_`, `-`, at most 64 characters) and prefixed, so they stay apart from
 * other servers' tools in a client that mounts several.
 */
export const TOOL_NAMES = {
  health: 'svc_health',
  listModels: 'svc_list_models',
  chat: 'svc_chat',
  embed: 'svc_embed',
  listSpaces: 'svc_list_spaces',
  searchSpace: 'svc_search_space',
  searchSpaces: 'svc_search_spaces',
  addToSpace: 'svc_add_to_space',
  solve: 'svc_solve',
  solveBatch: 'svc_solve_batch',
} as const;

export type ToolName = (typeof TOOL_NAMES)[keyof typeof TOOL_NAMES];

const ALL_TOOL_NAMES: ReadonlySet<string> = new Set(Object.values(TOOL_NAMES));

/** True for a name svc's MCP server and `/openai-tools` define (an exact match, never a prefix). */
export function isLocalToolName(name: string): name is ToolName {
  return ALL_TOOL_NAMES.has(name);
}
