import type { ChatMessage, ChatOptions, SamplingOptions, ToolCall, ToolChoice, ToolDefinition } from '../inference/language-model.ts';
import { ApiError } from '../shared/api-error.ts';
import { parseWithSchema } from '../shared/parse-with-schema.ts';
import { quoteInput } from '../shared/quote-input.ts';
import { joinTextParts } from '../openai/chat-request.ts';
import {
  customToolSchema, textBlockSchema, toolResultBlockSchema, toolUseBlockSchema,
  type MessageParam, type MessagesRequest, type PromptRequest,
} from './messages-schemas.ts';

/**
 * Anthropic Messages → the engine's chat turns and options: the same LanguageModel call chat
 * completions makes, so the same engines, grammar guarantees and budgets apply.
 *
 * Turns: consecutive turns of one role are combined into one, as Anthropic does. A user turn's
 * `tool_result` blocks become `tool` turns (each must answer a `tool_use` of the assistant turn
 * just before, and every such `tool_use` must be answered there, Anthropic's rule); its text
 * blocks become the user turn. An assistant turn's `tool_use` blocks become its tool calls;
 * `thinking` blocks are dropped (Anthropic drops earlier turns' thinking from the context too).
 * A last assistant turn (prefill) is refused: the engines start a new assistant turn, they do
 * not continue one, and Anthropic answers 400 on models without prefill the same way.
 */

const TEXT_BLOCKS: ReadonlySet<string> = new Set(['text']);
/** Blocks of earlier assistant turns that carry nothing the model reads again. */
const DROPPED_BLOCKS: ReadonlySet<string> = new Set(['thinking', 'redacted_thinking']);

type Block = { type: string } & Record<string, unknown>;

interface Turn {
  role: 'user' | 'assistant';
  blocks: { block: Block; param: string }[];
}

function blocksOf(message: MessageParam, i: number): Turn['blocks'] {
  const content = message.content;
  if (typeof content === 'string') return [{ block: { type: 'text', text: content }, param: `messages[${i}].content` }];
  return content.map((block, j) => ({ block, param: `messages[${i}].content[${j}]` }));
}

/** Consecutive turns of one role as one turn (Anthropic combines them too). */
function combinedTurns(messages: readonly MessageParam[]): Turn[] {
  const turns: Turn[] = [];
  for (const [i, message] of messages.entries()) {
    const last = turns.at(-1);
    if (last !== undefined && last.role === message.role) last.blocks.push(...blocksOf(message, i));
    else turns.push({ role: message.role, blocks: blocksOf(message, i) });
  }
  return turns;
}

function notHere(block: Block, param: string, role: string): ApiError {
  const what = block.type === 'image' || block.type === 'document'
    ? `the local models take text only`
    : `svc takes text blocks here${role === 'user' ? ' and tool_result blocks' : ' and tool_use blocks'}`;
  return ApiError.invalidRequest(`${param} is a ${quoteInput(block.type)} block in a ${role} message; ${what}.`, `${param}.type`, 'unsupported_value');
}

/** The text of one block (or the 400 naming it), for a text-only part of the conversation. */
function textOf(block: Block, param: string): string {
  return parseWithSchema(textBlockSchema, block, { prefix: param }).text;
}

function toolResultText(content: unknown, param: string): string {
  if (content == null) return '';
  if (typeof content === 'string') return content;
  return joinTextParts(content as { type: string; text?: unknown }[], `${param}.content`, TEXT_BLOCKS);
}

/** Anthropic's tool-use ids are `toolu_…`; the engines name calls `call_…`. */
export function toolUseId(engineId: string): string {
  return engineId.startsWith('call_') ? `toolu_${engineId.slice('call_'.length)}` : engineId;
}

function assistantTurn(turn: Turn, callIds: Set<string>): ChatMessage {
  const texts: string[] = [];
  const toolCalls: ToolCall[] = [];
  for (const { block, param } of turn.blocks) {
    if (block.type === 'text') texts.push(textOf(block, param));
    else if (block.type === 'tool_use') {
      const use = parseWithSchema(toolUseBlockSchema, block, { prefix: param });
      if (callIds.has(use.id)) throw ApiError.invalidRequest(`${param}.id: the tool_use id ${quoteInput(use.id)} is used twice.`, `${param}.id`);
      callIds.add(use.id);
      toolCalls.push({ id: use.id, name: use.name, arguments: JSON.stringify(use.input) });
    } else if (!DROPPED_BLOCKS.has(block.type)) throw notHere(block, param, 'assistant');
  }
  return { role: 'assistant', content: texts.join('\n'), ...(toolCalls.length > 0 ? { toolCalls } : {}) };
}

/** A user turn: its tool results (answering `open`, the calls of the assistant turn before), then its text. */
function userTurn(turn: Turn, open: readonly ToolCall[], where: string): ChatMessage[] {
  const out: ChatMessage[] = [];
  const texts: string[] = [];
  const answered = new Set<string>();
  const openIds = new Set(open.map((call) => call.id));
  for (const { block, param } of turn.blocks) {
    if (block.type === 'text') texts.push(textOf(block, param));
    else if (block.type === 'tool_result') {
      const result = parseWithSchema(toolResultBlockSchema, block, { prefix: param });
      if (!openIds.has(result.tool_use_id)) {
        throw ApiError.invalidRequest(
          `${param}.tool_use_id: unexpected tool_use_id ${quoteInput(result.tool_use_id)}; each tool_result must answer a tool_use block of the assistant message just before it.`,
          `${param}.tool_use_id`,
        );
      }
      answered.add(result.tool_use_id);
      const text = toolResultText(result.content, param);
      // The engines' tool turns have no error flag: the model is told in the text.
      out.push({ role: 'tool', content: result.is_error === true ? `Error: ${text}` : text, toolCallId: result.tool_use_id });
    } else throw notHere(block, param, 'user');
  }
  const missing = open.filter((call) => !answered.has(call.id)).map((call) => call.id);
  if (missing.length > 0) {
    throw ApiError.invalidRequest(
      `${where}: tool_use ids were found without tool_result blocks immediately after: ${missing.map((id) => quoteInput(id)).join(', ')}. Each tool_use block must have a corresponding tool_result block in the next message.`,
      where,
    );
  }
  if (texts.length > 0) out.push({ role: 'user', content: texts.join('\n') });
  return out;
}

/** The system prompt and the conversation as engine turns, checked as described above. */
export function toEngineMessages(body: Pick<PromptRequest, 'system' | 'messages'>): ChatMessage[] {
  const out: ChatMessage[] = [];
  const system = body.system;
  if (system != null) {
    const text = typeof system === 'string' ? system : joinTextParts(system, 'system', TEXT_BLOCKS);
    if (text !== '') out.push({ role: 'system', content: text });
  }
  const turns = combinedTurns(body.messages);
  if (turns.at(-1)?.role === 'assistant') {
    throw ApiError.invalidRequest(
      'The last message is an assistant message (prefill); svc\'s models start a new assistant turn and cannot continue one. End the conversation with a user message.',
      `messages[${body.messages.length - 1}].role`, 'unsupported_value',
    );
  }
  const callIds = new Set<string>();
  let open: readonly ToolCall[] = [];
  for (const turn of turns) {
    // The message a turn starts at (a turn has one block at least: content "" is a text block).
    const where = turn.blocks[0]?.param.replace(/\.content.*$/, '') ?? 'messages';
    if (turn.role === 'assistant') {
      const message = assistantTurn(turn, callIds);
      out.push(message);
      open = message.toolCalls ?? [];
    } else {
      out.push(...userTurn(turn, open, where));
      open = [];
    }
  }
  return out;
}

type ToolOptions = Pick<ChatOptions, 'tools' | 'toolChoice' | 'parallelToolCalls'>;

/**
 * Tools and tool_choice → engine options. Client tools only: Anthropic's server tools run on
 * Anthropic's servers, so naming one is a 400. `any` is the engines' `required`, `tool` their
 * named function; both are enforced by grammar, as on chat completions, and every
 * `input_schema` is held to as if `strict` were set.
 */
export function toToolOptions(body: Pick<PromptRequest, 'tools' | 'tool_choice' | 'mcp_servers'>): ToolOptions {
  if ((body.mcp_servers?.length ?? 0) > 0) {
    throw ApiError.unsupported('mcp_servers', 'mcp_servers (Anthropic\'s MCP connector) is not available: svc\'s models call the tools a request lists; svc\'s own MCP server is at /mcp.');
  }
  const names = new Set<string>();
  const tools: ToolDefinition[] = (body.tools ?? []).map((raw, i) => {
    if (raw.type != null && raw.type !== 'custom') {
      throw ApiError.invalidRequest(
        `tools[${i}] is Anthropic's server tool ${quoteInput(raw.type)}; svc runs client tools only (name, description, input_schema).`,
        `tools[${i}].type`, 'unsupported_value',
      );
    }
    const tool = parseWithSchema(customToolSchema, raw, { prefix: `tools[${i}]` });
    if (names.has(tool.name)) throw ApiError.invalidRequest(`tools[${i}]: two tools are named ${quoteInput(tool.name)}.`, `tools[${i}].name`);
    names.add(tool.name);
    return { name: tool.name, description: tool.description ?? undefined, parameters: tool.input_schema, strict: tool.strict ?? undefined };
  });
  const choice = body.tool_choice;
  if (choice == null) return tools.length > 0 ? { tools } : {};
  if (tools.length === 0 && choice.type !== 'none' && choice.type !== 'auto') {
    throw ApiError.invalidRequest(`tool_choice ${quoteInput(choice.type)} needs at least one tool in tools.`, 'tool_choice');
  }
  let toolChoice: ToolChoice;
  if (choice.type === 'tool') {
    if (!names.has(choice.name)) throw ApiError.invalidRequest(`tool_choice names the tool ${quoteInput(choice.name)}, which is not in tools.`, 'tool_choice.name');
    toolChoice = { type: 'function', name: choice.name };
  } else toolChoice = { type: choice.type === 'any' ? 'required' : choice.type };
  const disableParallel = choice.type !== 'none' && choice.disable_parallel_tool_use === true;
  if (tools.length === 0) return {};
  return { tools, toolChoice, ...(disableParallel ? { parallelToolCalls: false } : {}) };
}

/** Sampling and stopping: `max_tokens` (required), temperature, top_p, top_k, stop_sequences. */
export function toSampling(body: MessagesRequest): SamplingOptions {
  const stop = (body.stop_sequences ?? []).filter((s) => s !== '');
  return {
    maxTokens: body.max_tokens,
    temperature: body.temperature ?? undefined,
    topP: body.top_p ?? undefined,
    topK: body.top_k ?? undefined,
    stop: stop.length > 0 ? stop : undefined,
  };
}

/** What a create request may ask that svc does not do, refused naming the field. */
export function refuseUnsupported(body: MessagesRequest): void {
  if (body.container != null) throw ApiError.unsupported('container', 'container (Anthropic\'s code-execution container) is not available from svc.');
}
