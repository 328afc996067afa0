import { McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import { ErrorCode, McpError, type CallToolResult, type GetPromptResult, type ListResourcesResult, type ReadResourceResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { SVC_VERSION } from '../shared/version.ts';
import { RuntimeAnswerError, RuntimeUnreachableError, type LocalRuntimeClient } from './local-runtime-client.ts';
import { LOCAL_TOOLS, ToolRefusal, type LocalTool } from './local-tools.ts';
import type { SpaceChanges } from './space-changes.ts';
import { isRecord } from '../shared/is-record.ts';

/**
 * One MCP server (tools, the space-document resources, the answer-from-a-space prompt) over
 * any transport: a session of `/mcp` in the daemon, one stateless request, or `svc mcp` on stdio.
 */
export interface McpServerOptions {
  runtime: LocalRuntimeClient;
  /** Where each call is logged: tool name, duration and outcome, never arguments or results. */
  log: McpLogger;
  /** Document additions from anywhere (tools, the HTTP API): each one tells this server's client. */
  changes: SpaceChanges;
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
function runtimeFor(runtime: LocalRuntimeClient, extra: { requestInfo?: { headers?: Record<string, string | string[] | undefined> } | undefined }): LocalRuntimeClient {
  const authorization = extra.requestInfo?.headers?.authorization;
  return typeof authorization === 'string' ? runtime.withHeaders({ authorization }) : runtime;
}

function registerTool(server: McpServer, tool: LocalTool, options: McpServerOptions): void {
  const { log, changes } = options;
  server.registerTool(tool.name, {
    title: tool.title,
    description: tool.description,
    inputSchema: tool.inputSchema,
    outputSchema: tool.outputSchema,
    annotations: { title: tool.title, ...tool.annotations },
  }, async (args, extra): Promise<CallToolResult> => {
    const started = performance.now();
    try {
      const structured = await tool.run(args, {
        runtime: runtimeFor(options.runtime, extra),
        signal: extra.signal,
        onDocumentAdded: () => changes.changed(),
      });
      log.info({ tool: tool.name, ms: Math.round(performance.now() - started), ok: true }, 'mcp tool call');
      return toolResult(structured);
    } catch (error) {
      const { message, kind } = failureMessage(tool.name, error);
      log.warn({ tool: tool.name, ms: Math.round(performance.now() - started), ok: false, failure: kind }, 'mcp tool call failed');
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
    if (error instanceof URIError) throw new McpError(ErrorCode.InvalidParams, 'The resource URI has a malformed percent-escape.');
    throw error;
  }
}

function registerResources(server: McpServer, runtime: LocalRuntimeClient): void {
  const template = new ResourceTemplate('svc://spaces/{space}/{document}', {
    list: async (extra) => listDocuments(runtimeFor(runtime, extra), extra.signal),
  });
  server.registerResource('space-document', template, {
    title: 'Knowledge-space document',
    description: 'The extracted text of a document in one of svc\'s knowledge spaces.',
  }, async (uri, variables, extra): Promise<ReadResourceResult> => {
    const space = variable(variables.space);
    const id = variable(variables.document);
    const document = await runtimeFor(runtime, extra).json('GET', `/api/spaces/${encodeURIComponent(space)}/documents/${encodeURIComponent(id)}?include=text`, undefined, extra.signal);
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
    argsSchema: { space: z.string().describe('the knowledge space to search'), question: z.string().describe('what to answer') },
  }, async ({ space, question }, extra): Promise<GetPromptResult> => {
    const body = await runtimeFor(runtime, extra).json('POST', `/api/spaces/${encodeURIComponent(space)}/search`, { query: question, top_k: PROMPT_PASSAGES }, extra.signal);
    const passages = isRecord(body) && Array.isArray(body.data) ? body.data.filter(isRecord) : [];
    return {
      description: `Answer from knowledge space '${space}' with citations`,
      messages: [{ role: 'user', content: { type: 'text', text: answerFromPassages(question, passages) } }],
    };
  });
}

/**
 * The tool-call lines (tool, duration, outcome: never arguments or results) go to the MCP
 * client as log notifications too, at the level it chose with `logging/setLevel`.
 */
function alsoToClient(server: McpServer, log: McpLogger): McpLogger {
  const send = (level: 'info' | 'warning', fields: Record<string, unknown>, message: string): void => {
    if (!server.isConnected()) return;
    void server.sendLoggingMessage({ level, logger: 'svc', data: { message, ...fields } }, server.server.transport?.sessionId).catch(() => {});
  };
  return {
    info: (fields, message) => { log.info(fields, message); send('info', fields, message); },
    warn: (fields, message) => { log.warn(fields, message); send('warning', fields, message); },
  };
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
  const log = alsoToClient(server, options.log);
  for (const tool of LOCAL_TOOLS) registerTool(server, tool, { ...options, log });
  registerResources(server, options.runtime);
  registerPrompt(server, options.runtime);
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
