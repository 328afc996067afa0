import { McpServer, ProtocolError, ProtocolErrorCode, ResourceTemplate, type CallToolResult, type GetPromptResult, type ListResourcesResult, type ReadResourceResult, type ServerContext } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { SVC_VERSION } from '../shared/version.ts';
import { RuntimeAnswerError, RuntimeUnreachableError, type LocalRuntimeClient } from './local-runtime-client.ts';
import { LOCAL_TOOLS, ToolRefusal, type LocalTool } from './local-tools.ts';
import type { SpaceChanges } from './space-changes.ts';
import { isRecord } from '../shared/is-record.ts';

/**
 * One MCP server (tools, the space-document resources, the answer-from-a-space prompt) over
 * any transport and either protocol era (SDK v2): one 2026-07-28 request on `/mcp`, a 2025-era
 * session or stateless request there, or a `svc mcp` stdio connection of either era.
 */
export interface McpServerOptions {
  runtime: LocalRuntimeClient;
  /** Where each call is logged: tool name, duration and outcome, never arguments or results. */
  log: McpLogger;
  /** Document additions from anywhere (tools, the HTTP API): tools report theirs here. */
  changes: SpaceChanges;
  /**
   * Whether this instance tells its own client of each change (`notifications/resources/list_changed`):
   * yes for a 2025-era session and a stdio connection (the SDK routes it onto the client's
   * `subscriptions/listen` on a 2026-07-28 one); no for an instance that serves one HTTP request,
   * where the route's `subscriptions/listen` streams carry changes instead.
   */
  announceChanges?: boolean;
}

export interface McpLogger {
  info(fields: Record<string, unknown>, message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
}

export const PROMPT_ANSWER_FROM_SPACE = 'svc_answer_from_space';
/** Documents one `resources/list` names at most (per space): a listing, not an export. */
const MAX_LISTED_DOCUMENTS = 1000;
/** Passages the prompt quotes. */
const PROMPT_PASSAGES = 5;


/** The message a caller sees: ours for refusals and the runtime's answers, a plain line otherwise. */
function failureMessage(tool: string, error: unknown): { message: string; kind: string } {
  if (error instanceof ToolRefusal) return { message: error.message, kind: 'refused' };
  if (error instanceof RuntimeUnreachableError) return { message: `${tool}: ${error.message}.`, kind: 'unreachable' };
  if (error instanceof RuntimeAnswerError) return { message: `${tool}: ${error.message}${error.code === undefined ? '' : ` (${error.code}, HTTP ${error.status})`}`, kind: `http_${error.status}` };
  return { message: `${tool} failed: the local runtime's answer could not be read.`, kind: 'internal' };
}

export function documentUri(space: string, documentId: string): string {
  return `svc://spaces/${encodeURIComponent(space)}/${encodeURIComponent(documentId)}`;
}

function toolResult(structured: Record<string, unknown>): CallToolResult {
  // The JSON text too: clients that ignore structuredContent still get the whole answer.
  return { content: [{ type: 'text', text: JSON.stringify(structured) }], structuredContent: structured };
}

/** The runtime as this caller may use it: an HTTP caller's Authorization goes along (developer keys). */
function runtimeFor(runtime: LocalRuntimeClient, ctx: ServerContext): LocalRuntimeClient {
  const authorization = ctx.http?.req?.headers.get('authorization');
  return typeof authorization === 'string' ? runtime.withHeaders({ authorization }) : runtime;
}

/**
 * The tool-call line (tool, duration, outcome: never arguments or results) goes to the client as a
 * log notification too, tied to the call: at or above the level a 2025-era client chose with
 * `logging/setLevel`, or a 2026-07-28 client named in the request's `_meta` (the SDK filters).
 * Protocol logging is deprecated in 2026-07-28 but still served; a client gone mid-call is no error.
 */
function tellClient(ctx: ServerContext, level: 'info' | 'warning', fields: Record<string, unknown>, message: string): void {
  void ctx.mcpReq.log(level, { message, ...fields }, 'svc').catch(() => {});
}

function registerTool(server: McpServer, tool: LocalTool, options: McpServerOptions): void {
  const { log, changes } = options;
  server.registerTool(tool.name, {
    title: tool.title,
    description: tool.description,
    inputSchema: tool.inputSchema,
    outputSchema: tool.outputSchema,
    annotations: { title: tool.title, ...tool.annotations },
  }, async (args, ctx): Promise<CallToolResult> => {
    const started = performance.now();
    try {
      const structured = await tool.run(args, {
        runtime: runtimeFor(options.runtime, ctx),
        signal: ctx.mcpReq.signal,
        onDocumentAdded: () => changes.changed(),
      });
      const fields = { tool: tool.name, ms: Math.round(performance.now() - started), ok: true };
      log.info(fields, 'mcp tool call');
      tellClient(ctx, 'info', fields, 'mcp tool call');
      return toolResult(structured);
    } catch (error) {
      const { message, kind } = failureMessage(tool.name, error);
      const fields = { tool: tool.name, ms: Math.round(performance.now() - started), ok: false, failure: kind };
      log.warn(fields, 'mcp tool call failed');
      tellClient(ctx, 'warning', fields, 'mcp tool call failed');
      return { content: [{ type: 'text', text: message }], isError: true };
    }
  });
}

async function listDocuments(runtime: LocalRuntimeClient, signal: AbortSignal): Promise<ListResourcesResult> {
  const spaces = await runtime.json('GET', '/api/spaces', undefined, signal);
  const names = isRecord(spaces) && Array.isArray(spaces.data) ? spaces.data.filter(isRecord).map((s) => String(s.name)) : [];
  const resources: ListResourcesResult['resources'] = [];
  for (const space of names) {
    const page = await runtime.json('GET', `/api/spaces/${encodeURIComponent(space)}/documents?limit=${MAX_LISTED_DOCUMENTS}`, undefined, signal);
    const documents = isRecord(page) && Array.isArray(page.data) ? page.data.filter(isRecord) : [];
    for (const d of documents) {
      const id = String(d.id);
      const title = typeof d.title === 'string' && d.title !== '' ? d.title : typeof d.source === 'string' && d.source !== '' ? d.source : id;
      resources.push({
        uri: documentUri(space, id),
        name: `${space}/${id}`,
        title,
        mimeType: d.format === 'markdown' ? 'text/markdown' : 'text/plain',
        description: `A document of knowledge space '${space}' (${String(d.format)}, ${Number(d.chunk_count)} chunks)`,
        ...(typeof d.text_bytes === 'number' ? { size: d.text_bytes } : {}),
      });
    }
  }
  return { resources };
}

function variable(value: string | string[] | undefined): string {
  try {
    return decodeURIComponent(Array.isArray(value) ? (value[0] ?? '') : (value ?? ''));
  } catch (error) {
    // A malformed %-escape is the client's mistake: invalid params, not an internal error.
    if (error instanceof URIError) throw new ProtocolError(ProtocolErrorCode.InvalidParams, 'The resource URI has a malformed percent-escape.');
    throw error;
  }
}

function registerResources(server: McpServer, runtime: LocalRuntimeClient): void {
  const template = new ResourceTemplate('svc://spaces/{space}/{document}', {
    list: async (ctx) => listDocuments(runtimeFor(runtime, ctx), ctx.mcpReq.signal),
  });
  server.registerResource('space-document', template, {
    title: 'Knowledge-space document',
    description: 'The extracted text of a document in one of svc\'s knowledge spaces.',
  }, async (uri, variables, ctx): Promise<ReadResourceResult> => {
    const space = variable(variables.space);
    const id = variable(variables.document);
    const document = await runtimeFor(runtime, ctx).json('GET', `/api/spaces/${encodeURIComponent(space)}/documents/${encodeURIComponent(id)}?include=text`, undefined, ctx.mcpReq.signal);
    if (!isRecord(document) || typeof document.text !== 'string') throw new Error(`Document ${uri.href} has no text.`);
    return { contents: [{ uri: uri.href, mimeType: document.format === 'markdown' ? 'text/markdown' : 'text/plain', text: document.text }] };
  });
}

/** The prompt: the question and the space's best passages, numbered, with the instruction to cite them. */
export function answerFromPassages(question: string, passages: readonly Record<string, unknown>[]): string {
  const sources = passages.map((p, i) => {
    const where = [typeof p.title === 'string' ? p.title : null, typeof p.source === 'string' ? p.source : null, typeof p.page === 'number' ? `page ${p.page}` : null]
      .filter((part) => part !== null)
      .join(', ');
    return `[${i + 1}]${where === '' ? '' : ` (${where})`}\n${String(p.text)}`;
  });
  return [
    'Answer the question using only the numbered passages below. Cite each passage you use as [n] right after the sentence it supports.',
    'If the passages do not contain the answer, say so instead of guessing.',
    '',
    `Question: ${question}`,
    '',
    'Passages:',
    sources.length === 0 ? '(the search found no passages)' : sources.join('\n\n'),
  ].join('\n');
}

function registerPrompt(server: McpServer, runtime: LocalRuntimeClient): void {
  server.registerPrompt(PROMPT_ANSWER_FROM_SPACE, {
    title: 'Answer from a knowledge space',
    description: 'Searches a knowledge space for the question and asks for an answer from the passages found, citing them as [n].',
    argsSchema: z.object({ space: z.string().describe('the knowledge space to search'), question: z.string().describe('what to answer') }),
  }, async ({ space, question }, ctx): Promise<GetPromptResult> => {
    const body = await runtimeFor(runtime, ctx).json('POST', `/api/spaces/${encodeURIComponent(space)}/search`, { query: question, top_k: PROMPT_PASSAGES }, ctx.mcpReq.signal);
    const passages = isRecord(body) && Array.isArray(body.data) ? body.data.filter(isRecord) : [];
    return {
      description: `Answer from knowledge space '${space}' with citations`,
      messages: [{ role: 'user', content: { type: 'text', text: answerFromPassages(question, passages) } }],
    };
  });
}

/** A new server with every tool, the resources and the prompt; the caller connects a transport. */
export function buildMcpServer(options: McpServerOptions): McpServer {
  const server = new McpServer(
    { name: 'svc', title: 'svc local runtime', version: SVC_VERSION },
    {
      capabilities: { tools: { listChanged: false }, resources: { listChanged: true }, prompts: { listChanged: false }, logging: {} },
      instructions: 'svc runs models, knowledge-space search and solvers on this machine. Every tool stays local: the chat tool refuses models served off this machine.',
    },
  );
  for (const tool of LOCAL_TOOLS) registerTool(server, tool, options);
  registerResources(server, options.runtime);
  registerPrompt(server, options.runtime);
  if (options.announceChanges === false) return server;
  const unsubscribe = options.changes.subscribe(() => {
    if (server.isConnected()) server.sendResourceListChanged();
  });
  const previous = server.server.onclose;
  server.server.onclose = () => {
    unsubscribe();
    previous?.();
  };
  return server;
}
