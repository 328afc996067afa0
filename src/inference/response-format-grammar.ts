/**
 * `response_format` on the embedded engine: the GBNF a reply must follow (svc's own writer,
 * schema-gbnf-writer.ts), and the compiled llama.cpp grammar for it, cached per loaded model.
 */
import type { LlamaGrammar } from 'node-llama-cpp';
import { ApiError } from '../shared/api-error.ts';
import type { ResponseFormat } from './language-model.ts';
import type { ToolPlan } from './llama-tools.ts';
import type { LoadedLlamaModel } from './loaded-llama-model.ts';
import { schemaToGbnf } from './schema-gbnf-writer.ts';

/** Compiled grammars kept per loaded model. */
const GRAMMAR_CACHE_SIZE = 64;
/** Written grammars kept by schema text: the writer's work, repeated by every structured-output loop. */
const GBNF_CACHE_SIZE = 128;
const written = new Map<string, string>();

/** `json_object`: any object. */
const ANY_OBJECT = { type: 'object' };

/** The end-of-value stop text every written grammar ends with (END_OF_VALUE in gbnf-rules.ts). */
const STOP_TEXT = '\n'.repeat(4);

function cachedGbnf(schema: unknown, param: string): string {
  const key = JSON.stringify(schema);
  const known = written.get(key);
  if (known !== undefined) {
    written.delete(key);
    written.set(key, known);
    return known;
  }
  const gbnf = schemaToGbnf(schema, param);
  written.set(key, gbnf);
  if (written.size > GBNF_CACHE_SIZE) written.delete(written.keys().next().value!);
  return gbnf;
}

/**
 * The GBNF a reply must follow, or none. A forced tool call makes the reply a call, so the
 * format has nothing to shape; with `auto` node-llama-cpp cannot constrain a reply to a grammar
 * and detect calls at once, so the two are refused together rather than one ignored. A schema
 * the writer cannot enforce is a 400 naming the keyword.
 */
export function responseFormatGrammar(format: ResponseFormat | undefined, plan: ToolPlan): string | undefined {
  if (format === undefined || format.type === 'text' || plan.force) return undefined;
  if (plan.callable !== undefined) {
    throw ApiError.unsupported('response_format', "response_format cannot be combined with tools under tool_choice 'auto' on the embedded engine: its grammar-constrained decoding can follow a JSON schema or detect tool calls, not both. Send tool_choice 'none', 'required' or a named function, or leave out one of the two.");
  }
  return format.type === 'json_object' ? cachedGbnf(ANY_OBJECT, 'response_format') : cachedGbnf(format.schema, 'response_format.json_schema.schema');
}

/**
 * The compiled grammar for GBNF text, cached per loaded model: llama.cpp parses it on the event
 * loop, work a client repeating the same schema need not pay twice. Generation stops on the
 * four newlines the grammar ends with, trimmed from the reply (as node-llama-cpp's JSON-schema
 * grammars do).
 */
export async function compiledGrammar(loaded: Pick<LoadedLlamaModel, 'lib' | 'model' | 'grammars'>, gbnf: string): Promise<LlamaGrammar> {
  const cached = loaded.grammars.get(gbnf);
  if (cached !== undefined) {
    // Least recently used goes first: re-inserting moves this one to the end.
    loaded.grammars.delete(gbnf);
    loaded.grammars.set(gbnf, cached);
    return cached;
  }
  let grammar: LlamaGrammar;
  try {
    grammar = await loaded.model.llama.createGrammar({ grammar: gbnf, stopGenerationTriggers: [loaded.lib.LlamaText([STOP_TEXT])], trimWhitespaceSuffix: true });
  } catch (error) {
    // llama.cpp refuses what no grammar can write, such as a schema that is only itself (left recursion).
    throw new ApiError({
      status: 400, type: 'invalid_request_error', code: 'unsupported_schema', param: 'response_format.json_schema.schema',
      message: 'The schema could not be compiled into a grammar (a schema that refers to itself before writing any bracket cannot be written).', cause: error,
    });
  }
  loaded.grammars.set(gbnf, grammar);
  if (loaded.grammars.size > GRAMMAR_CACHE_SIZE) loaded.grammars.delete(loaded.grammars.keys().next().value!);
  return grammar;
}
