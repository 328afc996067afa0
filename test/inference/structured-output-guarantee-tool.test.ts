/**
 * The structured-output guarantee on the embedded engine for a strict tool under `tool_choice:
 * required`, as a property over 1,000 seeds (the property: test/helpers/structured-output-seeds.ts).
 * A file of its own so that `node --test` runs it beside the response-format seeds: the template
 * documents the tool in an ~850-token prompt (node-llama-cpp's function preamble is ~740 of
 * them), and on this fixture a token's decode costs about 3× as much at that context length.
 * The prompt is evaluated once per pooled sequence and reused by every later seed (the engine
 * picks the sequence whose last prompt shares the most), so what each seed pays is its own
 * tokens: max_tokens 24–95, of which a complete call takes 66–93.
 */
import { ORDER, orderCheck, seedProperty } from '../helpers/structured-output-seeds.ts';

const SEEDS = 1000;

seedProperty(`structured output on the fixture model: ${SEEDS} seeds of a strict tool`, [
  { name: 'strict tool, tool_choice required', options: { tools: [{ name: 'order', parameters: ORDER, strict: true }], toolChoice: { type: 'required' } }, check: orderCheck, tool: 'order', seeds: SEEDS, minTokens: 24 },
]);
