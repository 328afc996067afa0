import { z } from 'zod';
import { LOCAL_TOOLS, type LocalTool } from './local-tools.ts';

/**
 * `GET /openai-tools`: the MCP tools as OpenAI's function-calling `tools` array, generated from
 * the same definitions. Parameters are draft-07 JSON Schema with an object at the top and no
 * `$schema` (OpenAI and OpenAI-compatible servers take that form), with value bounds stated in
 * descriptions (portableSchema), so local grammar-constrained models take the tools too.
 */
export interface OpenAIFunctionTool {
  type: 'function';
  function: { name: string; description: string; parameters: Record<string, unknown> };
}

type JsonSchema = Record<string, unknown>;

/**
 * Keywords that bound a value without changing its shape. Grammar-constrained engines (svc's own
 * llama.cpp models, llama-server, Ollama) cannot enforce them and refuse a tool that has them, so
 * here they move into the description, as text the model reads; the MCP server still checks
 * every call against the full schema and answers a call outside the bounds with a tool error.
 */
const BOUNDS = new Map<string, (value: unknown) => string>([
  ['minimum', (v) => `at least ${String(v)}`],
  ['exclusiveMinimum', (v) => `more than ${String(v)}`],
  ['maximum', (v) => `at most ${String(v)}`],
  ['exclusiveMaximum', (v) => `less than ${String(v)}`],
  ['multipleOf', (v) => `a multiple of ${String(v)}`],
  ['pattern', (v) => `matching /${String(v)}/`],
]);
/** Where a schema holds schemas: one, a list, or a map by name. */
const ONE = ['items', 'additionalProperties', 'propertyNames', 'not', 'contains'];
const LIST = ['anyOf', 'oneOf', 'allOf', 'prefixItems'];
const MAP = ['properties', '$defs', 'definitions'];

function isSchema(value: unknown): value is JsonSchema {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The schema with its value bounds moved into descriptions (see BOUNDS). */
export function portableSchema(schema: JsonSchema): JsonSchema {
  const out: JsonSchema = {};
  const bounds: string[] = [];
  for (const [key, value] of Object.entries(schema)) {
    const bound = BOUNDS.get(key);
    if (bound !== undefined) bounds.push(bound(value));
    else if (ONE.includes(key) && isSchema(value)) out[key] = portableSchema(value);
    else if (LIST.includes(key) && Array.isArray(value)) out[key] = value.map((v) => (isSchema(v) ? portableSchema(v) : v));
    else if (MAP.includes(key) && isSchema(value)) out[key] = Object.fromEntries(Object.entries(value).map(([name, v]) => [name, isSchema(v) ? portableSchema(v) : v]));
    else out[key] = value;
  }
  if (bounds.length > 0) out.description = [typeof out.description === 'string' ? out.description : undefined, bounds.join(', ')].filter((d) => d !== undefined).join('; ');
  return out;
}

/** A tool's input schema as JSON Schema, in the form MCP lists it (draft-07, without `$schema`). */
export function toolInputSchema(tool: Pick<LocalTool, 'inputSchema'>): JsonSchema {
  const schema = z.toJSONSchema(tool.inputSchema, { target: 'draft-7', io: 'input' }) as JsonSchema;
  delete schema.$schema;
  return schema;
}

export function openAITools(tools: readonly LocalTool[] = LOCAL_TOOLS): { tools: OpenAIFunctionTool[] } {
  return {
    tools: tools.map((tool) => ({
      type: 'function',
      function: { name: tool.name, description: tool.description, parameters: portableSchema(toolInputSchema(tool)) },
    })),
  };
}
