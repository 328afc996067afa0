import { z } from 'zod';
import { chatCompletionRequestSchema, embeddingRequestSchema } from '../openai/openai-schemas.ts';
import { batchRequestSchema, BATCH_MAX_PROBLEMS, PROBLEM_SCHEMAS, solveRequestSchema, SOLVER_NAMES } from '../quantum/solve-schemas.ts';
import { MAX_METADATA_KEY_CHARS, MAX_METADATA_KEYS, MAX_METADATA_VALUE_CHARS } from '../spaces/space-input.ts';
import { addTextDocumentSchema, searchAllSchema, searchSchema } from '../spaces/space-schemas.ts';
import type { LocalRuntimeClient } from './local-runtime-client.ts';
import { LOCAL_CONTEXT, requireLocalModel } from './require-local-model.ts';
import { ToolRefusal } from './tool-refusal.ts';
import { TOOL_NAMES, type ToolName } from './tool-names.ts';
import { isRecord } from '../shared/is-record.ts';

/**
 * svc's local-context tools, each defined once: the MCP server registers them (over HTTP and
 * stdio) and `/openai-tools` lists them as OpenAI functions. Input schemas are the HTTP API's own
 * zod schemas, picked down to what a tool takes; handlers are thin calls to the local runtime,
 * so a tool answers exactly what the same HTTP request would.
 */

/** MCP tool annotations (hints a client uses to ask before acting). Every tool is closed-world. */
export interface ToolAnnotations {
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
  openWorldHint: false;
}

/** What a handler has to hand. */
export interface ToolContext {
  runtime: LocalRuntimeClient;
  signal?: AbortSignal | undefined;
  /** Told after a document is added through a tool (resource list change notifications). */
  onDocumentAdded?: ((space: string, documentId: string) => void) | undefined;
}

export { ToolRefusal };

export interface LocalTool<I extends z.ZodObject = z.ZodObject, O extends z.ZodObject = z.ZodObject> {
  name: ToolName;
  title: string;
  description: string;
  inputSchema: I;
  outputSchema: O;
  annotations: ToolAnnotations;
  run(args: z.output<I>, context: ToolContext): Promise<z.output<O>>;
}

const READ_ONLY: ToolAnnotations = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };

function defineTool<I extends z.ZodObject, O extends z.ZodObject>(tool: LocalTool<I, O>): LocalTool<I, O> {
  return tool;
}

/**
 * Document metadata as JSON Schema can state it. The spaces API checks metadata with a custom
 * zod check (it keeps a `__proto__` key), which has no JSON Schema form; this is the same rule
 * written as a record, and the runtime still checks what arrives with its own.
 */
const metadataRecord = z
  // Key lengths in a refinement: grammar engines refuse `propertyNames` (see openai-tools.ts).
  .record(z.string(), z.union([z.string().max(MAX_METADATA_VALUE_CHARS), z.number(), z.boolean()]))
  .refine((value) => Object.keys(value).length <= MAX_METADATA_KEYS, `at most ${MAX_METADATA_KEYS} keys`)
  .refine((value) => Object.keys(value).every((key) => key.length >= 1 && key.length <= MAX_METADATA_KEY_CHARS), `keys are 1-${MAX_METADATA_KEY_CHARS} characters`)
  .describe(`a flat object of strings, numbers and booleans (at most ${MAX_METADATA_KEYS} keys of 1-${MAX_METADATA_KEY_CHARS} characters)`);
// z.record drops an own `__proto__` key; as a search filter that would silently widen it, so refuse.
const toolMetadataSchema = z.preprocess((value, ctx) => {
  if (typeof value === 'object' && value !== null && Object.hasOwn(value, '__proto__')) {
    ctx.issues.push({ code: 'custom', message: 'the key \'__proto__\' is not accepted', input: value });
  }
  return value;
}, metadataRecord);

const spaceNameField = z.string().min(1).max(64).describe('the space\'s name (svc_list_spaces lists them)');

const searchFilterSchema = z
  .strictObject({
    document_ids: z.array(z.string().max(100)).max(1000).nullish().describe('only these documents'),
    metadata: toolMetadataSchema.nullish().describe('only documents whose metadata has these exact values'),
  })
  .nullish();

const searchResultSchema = z.looseObject({
  space: z.string(),
  document_id: z.string(),
  chunk_id: z.string(),
  title: z.string().nullable(),
  source: z.string().nullable(),
  page: z.number().nullable(),
  heading_path: z.array(z.string()),
  text: z.string(),
  snippet: z.string(),
  score: z.number(),
});

const searchOutputSchema = z.strictObject({
  query: z.string(),
  mode: z.string(),
  results: z.array(searchResultSchema),
});

const documentSchema = z.looseObject({
  id: z.string(),
  space: z.string(),
  title: z.string().nullable(),
  source: z.string().nullable(),
  format: z.string(),
  chunk_count: z.number(),
  text_bytes: z.number(),
  created_at: z.string(),
});

const solveMetaSchema = z.looseObject({ shots: z.number(), optimal_count: z.number(), energy: z.number(), depth: z.number(), elapsed_ms: z.number() });

/** Every problem shape the solvers accept; the runtime checks that it suits the solver named. */
const problemSchema = z.union(Object.values(PROBLEM_SCHEMAS).flatMap((byType) => Object.values(byType)) as [z.ZodType, z.ZodType, ...z.ZodType[]]);


function listOf(body: unknown): unknown[] {
  return isRecord(body) && Array.isArray(body.data) ? body.data : [];
}

/** Drops null and undefined fields (the HTTP API takes them as absent anyway). */
function present<T extends Record<string, unknown>>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v != null)) as Partial<T>;
}

const path = (...segments: string[]): string => segments.map((s) => encodeURIComponent(s)).join('/');

const health = defineTool({
  name: TOOL_NAMES.health,
  title: 'svc health',
  description: 'Checks that the local svc runtime is up: version, models available and loaded, solver capacity, knowledge-space retrieval status.',
  inputSchema: z.strictObject({}),
  outputSchema: z.looseObject({ status: z.string(), version: z.string().optional() }),
  annotations: READ_ONLY,
  async run(_args, { runtime, signal }) {
    const body = await runtime.json('GET', '/health', undefined, signal);
    if (!isRecord(body) || typeof body.status !== 'string') throw new ToolRefusal('The local runtime\'s /health answer is not svc\'s.');
    return { ...body, status: body.status };
  },
});

const modelSchema = z.looseObject({
  id: z.string(),
  owned_by: z.string(),
  plane: z.enum(['local', 'remote']),
  capabilities: z.array(z.string()),
  state: z.string(),
});

const listModels = defineTool({
  name: TOOL_NAMES.listModels,
  title: 'List models',
  description: 'Lists the models the local svc runtime serves: id, capabilities (chat, embeddings), whether loaded, and plane (local, or remote: an upstream off this machine, which svc_chat refuses).',
  inputSchema: z.strictObject({}),
  outputSchema: z.strictObject({ models: z.array(modelSchema) }),
  annotations: READ_ONLY,
  async run(_args, { runtime, signal }) {
    const models = listOf(await runtime.json('GET', '/v1/models', undefined, signal));
    return { models: models.filter(isRecord).map((m) => ({ ...m, id: String(m.id), owned_by: String(m.owned_by), plane: m.plane === 'local' ? 'local' as const : 'remote' as const, capabilities: Array.isArray(m.capabilities) ? m.capabilities.map(String) : [], state: String(m.state) })) };
  },
});

const chatInput = chatCompletionRequestSchema.pick({
  model: true, messages: true, max_tokens: true, temperature: true, top_p: true, seed: true, stop: true, spaces: true, retrieval: true,
});

const chat = defineTool({
  name: TOOL_NAMES.chat,
  title: 'Chat with a local model',
  description: 'Sends a conversation to a model running on this machine and returns its reply. Only local models: one served by a remote upstream is refused, so local context never leaves the machine. `spaces` grounds the answer in knowledge spaces, with numbered citations.',
  inputSchema: chatInput,
  outputSchema: z.strictObject({
    model: z.string(),
    content: z.string(),
    finish_reason: z.string().nullable(),
    usage: z.looseObject({ prompt_tokens: z.number(), completion_tokens: z.number(), total_tokens: z.number() }).nullable(),
    citations: z.array(z.looseObject({ index: z.number() })).optional(),
  }),
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  async run(args, { runtime, signal }) {
    await requireLocalModel(runtime, args.model, signal);
    const body = await runtime.withHeaders(LOCAL_CONTEXT).json('POST', '/v1/chat/completions', { ...present(args), stream: false }, signal);
    const choice = isRecord(body) && Array.isArray(body.choices) && isRecord(body.choices[0]) ? body.choices[0] : {};
    const message = isRecord(choice.message) ? choice.message : {};
    const usage = isRecord(body) && isRecord(body.usage) ? body.usage : null;
    const retrieval = isRecord(body) && isRecord(body.svc_retrieval) ? body.svc_retrieval : undefined;
    return {
      model: isRecord(body) && typeof body.model === 'string' ? body.model : args.model,
      content: typeof message.content === 'string' ? message.content : '',
      finish_reason: typeof choice.finish_reason === 'string' ? choice.finish_reason : null,
      usage: usage === null ? null : { ...usage, prompt_tokens: Number(usage.prompt_tokens), completion_tokens: Number(usage.completion_tokens), total_tokens: Number(usage.total_tokens) },
      ...(retrieval !== undefined && Array.isArray(retrieval.citations) ? { citations: retrieval.citations.filter(isRecord).map((c) => ({ ...c, index: Number(c.index) })) } : {}),
    };
  },
});

const embed = defineTool({
  name: TOOL_NAMES.embed,
  title: 'Embed text',
  description: 'Turns text into embedding vectors with a model on this machine (a remote upstream\'s is refused; svc-hashed-embed-v2 is built in; svc_list_models shows others with the embeddings capability).',
  inputSchema: embeddingRequestSchema.pick({ model: true, input: true, dimensions: true }),
  outputSchema: z.strictObject({
    model: z.string(),
    embeddings: z.array(z.array(z.number())),
    usage: z.looseObject({ prompt_tokens: z.number(), total_tokens: z.number() }).nullable(),
  }),
  annotations: READ_ONLY,
  async run(args, { runtime, signal }) {
    await requireLocalModel(runtime, args.model, signal);
    const body = await runtime.withHeaders(LOCAL_CONTEXT).json('POST', '/v1/embeddings', { ...present(args), encoding_format: 'float' }, signal);
    const usage = isRecord(body) && isRecord(body.usage) ? body.usage : null;
    return {
      model: isRecord(body) && typeof body.model === 'string' ? body.model : args.model,
      embeddings: listOf(body).filter(isRecord).map((d) => (Array.isArray(d.embedding) ? d.embedding.map(Number) : [])),
      usage: usage === null ? null : { ...usage, prompt_tokens: Number(usage.prompt_tokens), total_tokens: Number(usage.total_tokens) },
    };
  },
});

const listSpaces = defineTool({
  name: TOOL_NAMES.listSpaces,
  title: 'List knowledge spaces',
  description: 'Lists the knowledge spaces on this machine: name, embedder, document and chunk counts.',
  inputSchema: z.strictObject({}),
  outputSchema: z.strictObject({
    spaces: z.array(z.looseObject({ name: z.string(), document_count: z.number(), chunk_count: z.number() })),
  }),
  annotations: READ_ONLY,
  async run(_args, { runtime, signal }) {
    const spaces = listOf(await runtime.json('GET', '/api/spaces', undefined, signal)).filter(isRecord);
    return { spaces: spaces.map((s) => ({ ...s, name: String(s.name), document_count: Number(s.document_count), chunk_count: Number(s.chunk_count) })) };
  },
});

function searchOutput(body: unknown, query: string): z.output<typeof searchOutputSchema> {
  return {
    query,
    mode: isRecord(body) && typeof body.mode === 'string' ? body.mode : 'hybrid',
    results: listOf(body).filter(isRecord) as z.output<typeof searchResultSchema>[],
  };
}

const searchSpace = defineTool({
  name: TOOL_NAMES.searchSpace,
  title: 'Search a knowledge space',
  description: 'Searches one knowledge space (hybrid BM25 and vectors by default) and returns the best passages with their document, title, source, page and score.',
  inputSchema: searchSchema.extend({ space: spaceNameField, filter: searchFilterSchema }),
  outputSchema: searchOutputSchema.extend({ space: z.string() }),
  annotations: READ_ONLY,
  async run(args, { runtime, signal }) {
    const { space, ...request } = args;
    const body = await runtime.json('POST', `/api/spaces/${path(space)}/search`, present(request), signal);
    return { space, ...searchOutput(body, args.query) };
  },
});

const searchSpaces = defineTool({
  name: TOOL_NAMES.searchSpaces,
  title: 'Search all knowledge spaces',
  description: 'Searches every knowledge space (or those named in `spaces`) at once and returns the best passages across them.',
  inputSchema: searchAllSchema.extend({ filter: searchFilterSchema }),
  outputSchema: searchOutputSchema,
  annotations: READ_ONLY,
  async run(args, { runtime, signal }) {
    return searchOutput(await runtime.json('POST', '/api/search', present(args), signal), args.query);
  },
});

const addToSpace = defineTool({
  name: TOOL_NAMES.addToSpace,
  title: 'Add text to a knowledge space',
  description: 'Adds a text or Markdown document to a knowledge space (the space must exist). Adding the same text again changes nothing and returns the existing document.',
  inputSchema: addTextDocumentSchema.extend({ space: spaceNameField, metadata: toolMetadataSchema.nullish() }),
  outputSchema: z.strictObject({ created: z.boolean(), document: documentSchema }),
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  async run(args, { runtime, signal, onDocumentAdded }) {
    const { space, ...document } = args;
    const answer = await runtime.call('POST', `/api/spaces/${path(space)}/documents`, present(document), signal);
    if (!isRecord(answer.body) || typeof answer.body.id !== 'string') throw new ToolRefusal('The local runtime\'s answer holds no document.');
    const record = answer.body;
    if (answer.status === 201) onDocumentAdded?.(space, String(record.id));
    return { created: answer.status === 201, document: documentSchema.parse(record) };
  },
});

// Strict, as on /api/solve: a misspelt field is an error, not silently a default.
const solveInput = z.strictObject({
  ...solveRequestSchema.pick({ shots: true, seed: true }).shape,
  solver: z.enum(SOLVER_NAMES),
  problem: problemSchema,
});

const solveResultSchema = z.looseObject({
  id: z.string(),
  solver: z.string(),
  status: z.string(),
  solution: z.record(z.string(), z.unknown()),
  meta: solveMetaSchema,
});

const solve = defineTool({
  name: TOOL_NAMES.solve,
  title: 'Solve an optimisation problem',
  description: 'Runs one of svc\'s quantum solvers on this machine\'s state-vector simulator: qaoa (route_optimization), grover (pattern_search, qrng), qkmeans (clustering), qsvm (classification), qubo (portfolio_allocation).',
  inputSchema: solveInput,
  outputSchema: solveResultSchema,
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  async run(args, { runtime, signal }) {
    // The simulator on this machine only: a hardware substrate would take the problem off it.
    return solveResultSchema.parse(await runtime.json('POST', '/api/solve', { ...present(args), substrate: 'local' }, signal));
  },
});

const solveBatchOutput = z.looseObject({
  id: z.string(),
  solver: z.string(),
  status: z.string(),
  // Each problem completed or failed on its own (a failed one carries its error envelope).
  results: z.array(
    z.union([
      z.looseObject({ index: z.number(), status: z.literal('completed'), solution: z.record(z.string(), z.unknown()), meta: solveMetaSchema }),
      z.looseObject({ index: z.number(), status: z.literal('failed'), solution: z.null(), meta: z.null(), error: z.looseObject({ message: z.string(), type: z.string(), code: z.string() }) }),
    ]),
  ),
  total_elapsed_ms: z.number(),
});

const solveBatch = defineTool({
  name: TOOL_NAMES.solveBatch,
  title: 'Solve a batch of problems',
  description: `Runs one solver on up to ${BATCH_MAX_PROBLEMS} problems of its kind at once, on this machine's simulator; results come back in order.`,
  inputSchema: z.strictObject({
    ...batchRequestSchema.pick({ shots: true, seed: true }).shape,
    solver: z.enum(SOLVER_NAMES),
    problems: z.array(problemSchema).min(1).max(BATCH_MAX_PROBLEMS),
  }),
  outputSchema: solveBatchOutput,
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  async run(args, { runtime, signal }) {
    return solveBatchOutput.parse(await runtime.json('POST', '/api/solve/batch', { ...present(args), substrate: 'local' }, signal));
  },
});

/** Every tool, in the order clients list them. */
export const LOCAL_TOOLS: readonly LocalTool[] = [
  health, listModels, chat, embed, listSpaces, searchSpace, searchSpaces, addToSpace, solve, solveBatch,
] as unknown as readonly LocalTool[];
