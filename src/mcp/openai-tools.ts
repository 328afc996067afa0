import { z } from 'zod';
import { LOCAL_TOOLS, type LocalTool } from './local-tools.ts';

/**
 * `GET /openai-tools`: the MCP tools as OpenAI's function-calling `tools` array, generated from
 * the same definitions. Parameters are draft-07 JSON Schema with an object at the top and no
 * `$schema` (OpenAI and OpenAI-compatible servers take that form).
 */
export interface OpenAIFunctionTool {
  type: 'function';
  function: { name: string; description: string; parameters: Record<string, unknown> };
}

/** A tool's input schema as JSON Schema, in the form function calling takes. */
export function toolParameters(tool: Pick<LocalTool, 'inputSchema'>): Record<string, unknown> {
  const schema = z.toJSONSchema(tool.inputSchema, { target: 'draft-7', io: 'input' }) as Record<string, unknown>;
  delete schema.$schema;
  return schema;
}

export function openAITools(tools: readonly LocalTool[] = LOCAL_TOOLS): { tools: OpenAIFunctionTool[] } {
  return {
    tools: tools.map((tool) => ({
      type: 'function',
      function: { name: tool.name, description: tool.description, parameters: toolParameters(tool) },
    })),
  };
}
