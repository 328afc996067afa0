import type { IncomingHttpHeaders } from 'node:http';

/** Local context found in a request: where it is and what it is, for the refusal's message. */
export interface LocalContext {
  /** Where in the request: `tools[0].function.name`, `messages[2].tool_calls[0]`, `spaces`. */
  param: string;
  /** What it is, for the message: `the svc tool "svc_search_space"`. */
  what: string;
}

/**
 * Sent by svc's own tools (MCP, `/openai-tools` handlers) with each model call they make: the
 * body is tool input, which is local context whatever it looks like. The route then applies the
 * privacy rule to the model it actually resolves, so a check done earlier on another lookup
 * cannot be raced or bypassed. Any client may send it to ask for the same guarantee.
 */
export const LOCAL_CONTEXT_HEADER = 'x-svc-local-context';

/** The marker as local context, when the request carries it (any value but "0"). */
export function markedLocalContext(headers: IncomingHttpHeaders): LocalContext | undefined {
  const value = headers[LOCAL_CONTEXT_HEADER];
  if (value === undefined || value === '0') return undefined;
  return { param: `header ${LOCAL_CONTEXT_HEADER}`, what: 'input from svc\'s local tools' };
}
