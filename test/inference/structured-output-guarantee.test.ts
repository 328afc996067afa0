/**
 * The structured-output guarantee on the embedded engine, as a property over seeds, for
 * response formats (the property itself: test/helpers/structured-output-seeds.ts). The strict
 * tool runs in its own file (structured-output-guarantee-tool.test.ts), beside this one: its
 * ~850-token prompt makes every token about 3× as slow to decode on this fixture. The HTTP paths
 * (chat and Responses, streamed and whole) run 1,000 seeds per schema in
 * test/runtime/structured-output-guarantee.test.ts.
 */
import { anyObject, ORDER, orderCheck, seedProperty } from '../helpers/structured-output-seeds.ts';

const SEEDS = 1000;

seedProperty(`structured output on the fixture model: ${SEEDS} seeds per response format`, [
  { name: 'json_object', options: { responseFormat: { type: 'json_object' } }, check: anyObject, seeds: SEEDS, minTokens: 8 },
  { name: 'strict json_schema (nested object, array, enum, numbers)', options: { responseFormat: { type: 'json_schema', name: 'order', schema: ORDER, strict: true } }, check: orderCheck, seeds: SEEDS, minTokens: 8, spread: 128 },
]);
