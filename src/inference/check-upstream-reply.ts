/**
 * The structured-output guarantee for models served by an upstream. svc passes `response_format`,
 * `tools` and `tool_choice` through and the upstream enforces them (or says it does); svc then
 * checks what comes back with the same checker as the embedded engine
 * (structured-reply-check.ts), so a client gets the same promise whichever engine answered:
 * a reply that says `stop` or `tool_calls` parses and validates against the request's schema.
 *
 * What is checked, like a gateway that validates responses (LiteLLM's
 * `enable_json_schema_validation`):
 * - `response_format` json_object (any object) or json_schema (the schema, strict or not, as
 *   svc treats every schema as strict for its own engine);
 * - the calls of tools with `strict: true`, and under `tool_choice` required or a named function
 *   the calls of every offered tool (forced: a call must come, of a tool offered, with valid
 *   arguments). A non-strict tool under `auto` is called as the upstream wrote it: OpenAI itself
 *   says such arguments may not be valid, and the client validates them.
 *
 * Unlike the embedded engine, an upstream's broken promise is never turned into `length`: svc
 * did not cut the reply, the upstream said it was complete and it is not, so the client gets a
 * 502 naming the upstream (upstream-errors.ts). A reply the upstream itself ends with `length`
 * passes on as it is.
 */
import { anyObject, schemaCheck, structuredReplyFault, type JsonCheck, type StructuredExpectation } from './structured-reply-check.ts';
import type { ChatOptions, GenerateResult } from './language-model.ts';
import { upstreamStructuredOutputInvalid, type UpstreamErrorContext } from './upstream-errors.ts';

/** What a chat reply from an upstream must be, or undefined when nothing structured was asked. */
export function upstreamExpectation(options: ChatOptions): StructuredExpectation | undefined {
  const format = options.responseFormat;
  const text: JsonCheck | undefined = format === undefined || format.type === 'text'
    ? undefined
    : format.type === 'json_schema' ? schemaCheck(format.schema) : anyObject;
  const choice = options.toolChoice;
  const forced = choice?.type === 'required' || choice?.type === 'function';
  const offered = choice?.type === 'none' ? [] : (options.tools ?? []).filter((t) => choice?.type !== 'function' || t.name === choice.name);
  const checked = offered.some((t) => forced || t.strict === true);
  if (!checked) return text === undefined ? undefined : { text };
  const tools = new Map<string, JsonCheck | null>();
  for (const tool of offered) {
    tools.set(tool.name, !forced && tool.strict !== true ? null : tool.parameters === undefined ? anyObject : schemaCheck(tool.parameters));
  }
  return { ...(text !== undefined ? { text } : {}), tools, callForced: forced };
}

/** The upstream's result, or a 502 when it claims a complete reply that breaks the expectation. */
export function checkUpstreamReply(result: GenerateResult, expected: StructuredExpectation, ctx: UpstreamErrorContext): GenerateResult {
  const fault = structuredReplyFault(result, expected);
  if (fault === undefined) return result;
  throw upstreamStructuredOutputInvalid(ctx, result.finishReason, fault);
}
