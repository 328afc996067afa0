/**
 * `response_format` on the embedded engine: which grammar schema a reply must follow, and the
 * compiled llama.cpp grammar for it, cached per loaded model.
 */
import type { LlamaGrammar } from 'node-llama-cpp';
import { ApiError } from '../shared/api-error.ts';
import { boundNumberExponents } from './bound-number-exponents.ts';
import { toGrammarSchema, type GrammarSchema } from './grammar-schema.ts';
import type { ResponseFormat } from './language-model.ts';
import type { ToolPlan } from './llama-tools.ts';
import type { LoadedLlamaModel } from './loaded-llama-model.ts';

/** Compiled grammars kept per loaded model. */
const GRAMMAR_CACHE_SIZE = 64;

/** `json_object`: any object, with node-llama-cpp's JSON grammar (and its end-of-JSON stop). */
const ANY_OBJECT: GrammarSchema = { type: 'object', additionalProperties: true };

/**
 * The grammar schema a reply must follow, or none. A forced tool call makes the reply a call,
 * so the format has nothing to shape; with `auto` node-llama-cpp cannot constrain a reply to
 * a grammar and detect calls at once, so the two are refused together rather than one ignored.
 */
export function responseFormatSchema(format: ResponseFormat | undefined, plan: ToolPlan): GrammarSchema | undefined {
  if (format === undefined || format.type === 'text' || plan.force) return undefined;
  if (plan.callable !== undefined) {
    throw ApiError.unsupported('response_format', "response_format cannot be combined with tools under tool_choice 'auto' on the embedded engine: its grammar-constrained decoding can follow a JSON schema or detect tool calls, not both. Send tool_choice 'none', 'required' or a named function, or leave out one of the two.");
  }
  return format.type === 'json_object' ? ANY_OBJECT : toGrammarSchema(format.schema, 'response_format.json_schema.schema');
}

/**
 * The compiled grammar for a JSON schema, cached per loaded model: node-llama-cpp compiles
 * the schema to GBNF in JavaScript and llama.cpp parses that on the event loop, work a client
 * repeating the same schema (every structured-output loop does) need not pay twice.
 */
export async function compiledGrammar(loaded: Pick<LoadedLlamaModel, 'lib' | 'model' | 'grammars'>, schema: GrammarSchema): Promise<LlamaGrammar> {
  const key = JSON.stringify(schema);
  const cached = loaded.grammars.get(key);
  if (cached !== undefined) {
    // Least recently used goes first: re-inserting moves this one to the end.
    loaded.grammars.delete(key);
    loaded.grammars.set(key, cached);
    return cached;
  }
  let grammar: LlamaGrammar;
  try {
    const compiled = await loaded.model.llama.createGrammarForJsonSchema<GrammarSchema>(schema);
    const bounded = boundNumberExponents(compiled.grammar);
    // The same grammar with finite numbers only (bound-number-exponents.ts says why), and the
    // stop trigger and whitespace trimming LlamaJsonSchemaGrammar sets.
    grammar = bounded === compiled.grammar
      ? compiled
      : await loaded.model.llama.createGrammar({ grammar: bounded, stopGenerationTriggers: [loaded.lib.LlamaText(['\n'.repeat(4)])], trimWhitespaceSuffix: true });
  } catch (error) {
    throw new ApiError({
      status: 400, type: 'invalid_request_error', code: 'unsupported_schema', param: 'response_format.json_schema.schema',
      message: 'The schema could not be compiled into a grammar.', cause: error,
    });
  }
  loaded.grammars.set(key, grammar);
  if (loaded.grammars.size > GRAMMAR_CACHE_SIZE) loaded.grammars.delete(loaded.grammars.keys().next().value!);
  return grammar;
}
