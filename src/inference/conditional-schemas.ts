/**
 * The conditional keywords as alternatives the writer already enforces (`anyOf`, merged with the
 * keywords beside them), each exact or a subset of what it allows, never more:
 *
 * - `if` I / `then` T / `else` E: (I ∧ T) ∨ (¬I ∧ E), with ¬I from negate-schema.ts. Without
 *   `else` that is T ∨ ¬I, without `then` I ∨ E (no negation needed). Where ¬I cannot be written,
 *   the subset T (then only) or (I ∧ T) ∨ (T ∧ E) (both: whichever way I turns out, T ∧ E
 *   satisfies the branch taken).
 * - `dependentRequired` {a: [b, c]}: "a is absent" ∨ "b and c are present";
 *   `dependentSchemas` {a: S}: "a is absent" ∨ S; draft-07 `dependencies` is either, per entry.
 *
 * Several conditions (and an `anyOf` beside them) multiply into one `anyOf` of their
 * combinations, up to MAX_ALTERNATIVES.
 */
import { negateSchema } from './negate-schema.ts';
import { isSchemaObject, type SchemaObject } from './schema-compiler.ts';

const MAX_ALTERNATIVES = 64;
const CONDITIONAL = ['if', 'then', 'else', 'dependentRequired', 'dependentSchemas', 'dependencies'];

export class ConditionRefusedError extends Error {
  readonly keyword: string;
  constructor(keyword: string, why: string) {
    super(why);
    this.keyword = keyword;
  }
}

export function hasConditions(node: SchemaObject): boolean {
  return (Object.hasOwn(node, 'if') && (Object.hasOwn(node, 'then') || Object.hasOwn(node, 'else')))
    || Object.hasOwn(node, 'dependentRequired') || Object.hasOwn(node, 'dependentSchemas') || Object.hasOwn(node, 'dependencies');
}

const absent = (name: string): SchemaObject => ({ properties: { [name]: false } });
const all = (...schemas: unknown[]): unknown => (schemas.includes(false) ? false : { allOf: schemas });

/** The alternatives of if/then/else (one of which must hold). */
function ifThenElse(node: SchemaObject): unknown[] {
  const cond = node.if;
  const hasThen = Object.hasOwn(node, 'then');
  const hasElse = Object.hasOwn(node, 'else');
  const then = hasThen ? node.then : true;
  const otherwise = hasElse ? node.else : true;
  if (!hasThen) return [cond, otherwise];
  const not = negateSchema(cond);
  if (!hasElse) return not === undefined ? [then] : [then, not];
  return not === undefined ? [all(cond, then), all(then, otherwise)] : [all(cond, then), all(not, otherwise)];
}

function dependency(keyword: string, name: string, dep: unknown): unknown[] {
  if (Array.isArray(dep)) {
    if (dep.some((d) => typeof d !== 'string')) throw new ConditionRefusedError(keyword, `'${keyword}' lists must hold property names`);
    return dep.length === 0 ? [true] : [absent(name), { required: dep }];
  }
  if (keyword === 'dependentRequired') throw new ConditionRefusedError(keyword, "'dependentRequired' values must be arrays of property names");
  return dep === true ? [true] : [absent(name), dep];
}

/** `node` with its conditional keywords turned into one `anyOf` (ConditionRefusedError when too many). */
export function conditionsAsAlternatives(node: SchemaObject): SchemaObject {
  const choices: unknown[][] = [];
  if (Object.hasOwn(node, 'if') && (Object.hasOwn(node, 'then') || Object.hasOwn(node, 'else'))) choices.push(ifThenElse(node));
  for (const keyword of ['dependentRequired', 'dependentSchemas', 'dependencies']) {
    if (!Object.hasOwn(node, keyword)) continue;
    const map = node[keyword];
    if (!isSchemaObject(map)) throw new ConditionRefusedError(keyword, `'${keyword}' must be an object`);
    for (const [name, dep] of Object.entries(map)) choices.push(dependency(keyword, name, dep));
  }
  if (Object.hasOwn(node, 'anyOf')) {
    if (!Array.isArray(node.anyOf)) throw new ConditionRefusedError('anyOf', "'anyOf' must be an array of schemas");
    choices.push(node.anyOf);
  }
  let combos: unknown[][] = [[]];
  for (const options of choices) {
    const live = options.filter((o) => o !== false);
    // One alternative that allows everything makes the condition hold whatever the value.
    if (live.some((o) => o === true || (isSchemaObject(o) && Object.keys(o).length === 0))) continue;
    combos = combos.flatMap((combo) => live.map((o) => [...combo, o]));
    if (combos.length > MAX_ALTERNATIVES) {
      const keyword = CONDITIONAL.find((k) => Object.hasOwn(node, k)) ?? 'if';
      throw new ConditionRefusedError(keyword, `the conditions combine into more than ${MAX_ALTERNATIVES} alternatives`);
    }
  }
  const rest = Object.fromEntries(Object.entries(node).filter(([k]) => !CONDITIONAL.includes(k) && k !== 'anyOf'));
  if (choices.some((options) => options.every((o) => o === false))) return { ...rest, anyOf: [false] };
  if (combos.length === 1 && combos[0]!.length === 0) return rest;
  return { ...rest, anyOf: combos.map((combo) => (combo.length === 1 ? combo[0] : { allOf: combo })) };
}
