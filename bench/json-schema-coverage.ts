/**
 * bench:schema-coverage — how much of JSON Schema each schema-to-grammar converter enforces,
 * measured on the public JSON Schema Test Suite (json-schema-org, draft 2020-12), side by side:
 *
 *  - svc: what a request's schema goes through (svc's own writer, schemaToGbnf, then
 *    compiledGrammar: llama.cpp's parse of that GBNF);
 *  - node-llama-cpp: createGrammarForJsonSchema on the suite's schema as is (no svc walk);
 *  - llama.cpp: its own json_schema_to_grammar (common/json-schema-to-grammar.cpp of the llama.cpp
 *    release node-llama-cpp ships, built by this bench from node-llama-cpp's bundled sources with
 *    bench/native/json-schema-to-grammar-cli.cpp), the converter llama-server uses.
 *
 * For every test group (one schema, its instances): compile the schema; a converter that
 * refuses it (svc's 400, an exception, or GBNF llama.cpp cannot parse) passes none of the
 * group's instances. Otherwise each instance is written as a model could write it — compact
 * (`{"a":1}`), spaced (`{"a": 1}`) and indented (JSON.stringify(v, null, 2)) — and matched
 * against the grammar by llama.cpp's own grammar engine (node-llama-cpp's LlamaGrammar._testText:
 * llama_grammar_accept over the text's code points, then "is a stack complete", the same
 * functions that constrain sampling; no model is involved). A `valid: true` instance passes when
 * the grammar accepts one of the writings; a `valid: false` one when it accepts none. A grammar
 * that accepts a `valid: false` instance lets a model write something the schema forbids:
 * counted as "unsound", and for svc listed by group (what post-generation validation must catch).
 * Per suite file it also prints the test groups all of whose instances pass, the unit of
 * JSONSchemaBench's published per-keyword figure (arXiv 2501.10868), so the two can be set side by side.
 *
 * With --jsonschemabench: schema-to-grammar time on the largest real schemas of JSONSchemaBench
 * (guidance-ai/jsonschemabench, data/*: GitHub, Kubernetes, JSON Schema Store, Snowplow,
 * Washington Post schemas), svc (schema → parsed llama.cpp grammar) against llama.cpp's converter
 * (schema → GBNF in C++, plus the same llama.cpp grammar parse), p50/p99 over the schemas each accepts.
 *
 * Usage: npm run bench:schema-coverage -- <JSON-Schema-Test-Suite checkout> [--jsonschemabench <checkout>]
 *        [--largest 100] [--reps 3] [--j2g <prebuilt CLI>] [--json]
 * (or JSON_SCHEMA_TEST_SUITE / JSONSCHEMABENCH_DIR). Needs g++ for the llama.cpp column.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { getLlama, LlamaLogLevel, type Llama, type LlamaGrammar } from 'node-llama-cpp';
import type * as NodeLlamaCpp from 'node-llama-cpp';
import { compiledGrammar } from '../src/inference/response-format-grammar.ts';
import { schemaToGbnf } from '../src/inference/schema-gbnf-writer.ts';

const { values: flags, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    jsonschemabench: { type: 'string' },
    largest: { type: 'string', default: '100' },
    reps: { type: 'string', default: '3' },
    j2g: { type: 'string' },
    json: { type: 'boolean', default: false },
  },
});

const SUITE = positionals[0] ?? process.env.JSON_SCHEMA_TEST_SUITE;
const JSB = flags.jsonschemabench ?? process.env.JSONSCHEMABENCH_DIR;
if (SUITE === undefined || !existsSync(join(SUITE, 'tests', 'draft2020-12'))) {
  console.error([
    'bench:schema-coverage needs a checkout of the JSON Schema Test Suite (it is not vendored):',
    '  git clone --depth 1 https://github.com/json-schema-org/JSON-Schema-Test-Suite /tmp/jsts',
    '  npm run bench:schema-coverage -- /tmp/jsts [--jsonschemabench /tmp/jsonschemabench]',
    `(or set JSON_SCHEMA_TEST_SUITE). ${SUITE === undefined ? 'No path was given.' : `${SUITE}/tests/draft2020-12 does not exist.`}`,
  ].join('\n'));
  process.exit(2);
}

/** The suite's files by keyword group (the file names are the keywords they test). */
const GROUPS: [string, string[]][] = [
  ['types', ['type', 'boolean_schema']],
  ['objects', ['properties', 'additionalProperties', 'required', 'minProperties', 'maxProperties', 'propertyNames', 'patternProperties', 'dependentRequired', 'dependentSchemas', 'unevaluatedProperties']],
  ['arrays', ['items', 'prefixItems', 'minItems', 'maxItems', 'contains', 'minContains', 'maxContains', 'uniqueItems', 'unevaluatedItems']],
  ['strings', ['minLength', 'maxLength', 'pattern', 'format']],
  ['numbers', ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf']],
  ['enum/const', ['enum', 'const']],
  ['combinators', ['anyOf', 'oneOf', 'allOf', 'not', 'if-then-else']],
  ['$ref/$defs', ['ref', 'defs', 'anchor', 'dynamicRef', 'refRemote']],
  ['others', ['content', 'default', 'vocabulary', 'infinite-loop-detection']],
];
const GROUP_OF = new Map(GROUPS.flatMap(([group, files]) => files.map((f) => [f, group] as const)));
const CONVERTERS = ['svc', 'node-llama-cpp', 'llama.cpp'] as const;
type Converter = (typeof CONVERTERS)[number];

interface SuiteCase { file: string; group: string; description: string; schema: unknown; tests: { description: string; data: unknown; valid: boolean }[] }

function loadSuite(dir: string): SuiteCase[] {
  const out: SuiteCase[] = [];
  const root = join(dir, 'tests', 'draft2020-12');
  for (const name of readdirSync(root).filter((n) => n.endsWith('.json')).sort()) {
    const file = basename(name, '.json');
    const group = GROUP_OF.get(file) ?? 'others';
    for (const c of JSON.parse(readFileSync(join(root, name), 'utf8')) as Omit<SuiteCase, 'file' | 'group'>[]) out.push({ ...c, file, group });
  }
  return out;
}

/** `{"a": 1, "b": [1, 2]}`: Python's json.dumps style, one space after ':' and ','. */
function spaced(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(spaced).join(', ')}]`;
  if (value !== null && typeof value === 'object') return `{${Object.entries(value).map(([k, v]) => `${JSON.stringify(k)}: ${spaced(v)}`).join(', ')}}`;
  return JSON.stringify(value);
}
/**
 * node-llama-cpp's JSON-schema grammars end in its stop trigger (`root ::= val "\n\n\n\n" [\n]*`):
 * generation stops when the model writes those four newlines, and the text is trimmed. So each
 * writing is also tried with them after it (whitespace after a JSON value does not change it).
 */
const STOP_TRIGGER = '\n\n\n\n';
const writings = (value: unknown): string[] =>
  [...new Set([JSON.stringify(value), spaced(value), JSON.stringify(value, null, 2)])].flatMap((text) => [text, text + STOP_TRIGGER]);

/** node-llama-cpp keeps llama.cpp's matcher internal; it is the one sampling uses. */
function accepts(grammar: LlamaGrammar, text: string): boolean {
  return (grammar as unknown as { _testText(text: string): boolean })._testText(text);
}

// ---- llama.cpp's converter, built from the sources node-llama-cpp ships ----

function buildJ2g(): string | { skipped: string } {
  if (flags.j2g !== undefined) return flags.j2g;
  const nlc = fileURLToPath(new URL('../node_modules/node-llama-cpp/', import.meta.url));
  const info = JSON.parse(readFileSync(join(nlc, 'llama', 'llama.cpp.info.json'), 'utf8')) as { tag: string };
  const dir = join(tmpdir(), `svc-bench-j2g-${info.tag}`);
  const binary = join(dir, 'j2g');
  if (existsSync(binary)) return binary;
  if (spawnSync('g++', ['--version']).status !== 0) return { skipped: 'g++ not found' };
  mkdirSync(dir, { recursive: true });
  const src = join(dir, 'llama.cpp');
  const run = (cmd: string, args: string[], cwd?: string): void => {
    const r = spawnSync(cmd, args, { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
    if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')}: ${r.stderr.toString().slice(-2000)}`);
  };
  if (!existsSync(src)) run('git', ['clone', '-q', '--no-checkout', join(nlc, 'llama', 'gitRelease.bundle'), src]);
  run('git', ['checkout', '-q', 'HEAD', '--', 'common', 'include', 'ggml/include', 'vendor'], src);
  console.error(`building llama.cpp's json_schema_to_grammar (${info.tag}) into ${binary} …`);
  run('g++', ['-O2', '-std=c++17', `-I${src}/common`, `-I${src}/include`, `-I${src}/ggml/include`, `-I${src}/vendor`,
    fileURLToPath(new URL('native/json-schema-to-grammar-cli.cpp', import.meta.url)),
    ...['json-schema-to-grammar', 'json-schema', 'json', 'trie', 'unicode'].map((f) => `${src}/common/${f}.cpp`), '-o', binary]);
  return binary;
}

interface J2gResult { ok: boolean; grammar?: string; error?: string; us: number }
function runJ2g(binary: string, schemas: unknown[]): J2gResult[] {
  const r = spawnSync(binary, { input: schemas.map((s) => JSON.stringify(s)).join('\n') + '\n', maxBuffer: 1 << 30 });
  if (r.status !== 0) throw new Error(`${binary} exited ${r.status}: ${r.stderr.toString().slice(-500)}`);
  return r.stdout.toString().trim().split('\n').map((l) => JSON.parse(l) as J2gResult);
}

// ---- compiling with each converter ----

type Compiled = { grammar: LlamaGrammar } | { refused: string };

/** Why a schema was refused, short enough to count refusals by it. */
function refusalOf(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const reasons: [RegExp, (m: RegExpExecArray) => string][] = [
    [/the keyword '([^']+)'/, (m) => m[1]!],
    [/the reference .* is not supported/, () => '$ref outside the schema'],
    [/the format "([^"]+)"/, () => 'format (unsupported)'],
    [/points outside the schema/, () => '$ref outside the schema'],
    [/allows no value/, () => 'schema allows nothing'],
    [/schema false|whose schema is false/, () => 'false schema'],
    [/only strings, numbers, booleans and null/, () => 'enum/const of objects or arrays'],
    [/'required' names/, () => 'required without properties'],
  ];
  for (const [re, name] of reasons) {
    const m = re.exec(message);
    if (m !== null) return name(m);
  }
  return message.replace(/^response_format\.json_schema\.schema at [^:]*: /, '').split('\n')[0]!.slice(0, 50);
}

async function compileSvc(llama: Llama, lib: typeof NodeLlamaCpp, schema: unknown): Promise<Compiled> {
  try {
    // compiledGrammar reads only model.llama; a fresh cache each time, as a first request finds it.
    const loaded = { lib, model: { llama }, grammars: new Map() } as unknown as Parameters<typeof compiledGrammar>[0];
    return { grammar: await compiledGrammar(loaded, schemaToGbnf(schema, 'response_format.json_schema.schema')) };
  } catch (error) {
    return { refused: refusalOf(error) };
  }
}

async function compileNlc(llama: Llama, schema: unknown): Promise<Compiled> {
  // It warns on the console for each reference it replaces with "any value"; the count shows as unsound.
  const warn = console.warn;
  console.warn = () => {};
  try {
    return { grammar: await llama.createGrammarForJsonSchema(schema as never) };
  } catch (error) {
    return { refused: refusalOf(error) };
  } finally {
    console.warn = warn;
  }
}

async function compileGbnf(llama: Llama, result: J2gResult | undefined): Promise<Compiled> {
  if (result === undefined) return { refused: 'not measured' };
  if (!result.ok) return { refused: (result.error ?? '').split('\n')[0]!.slice(0, 60) };
  try {
    return { grammar: await llama.createGrammar({ grammar: result.grammar! }) };
  } catch (error) {
    return { refused: `GBNF: ${refusalOf(error)}` };
  }
}

// ---- coverage ----

interface Tally { groups: number; compiled: number; instances: number; passed: number; validAccepted: number; valid: number; invalidRejected: number; invalid: number; unsound: number }
const emptyTally = (): Tally => ({ groups: 0, compiled: 0, instances: 0, passed: 0, validAccepted: 0, valid: 0, invalidRejected: 0, invalid: 0, unsound: 0 });

async function coverage(llama: Llama, lib: typeof NodeLlamaCpp, cases: SuiteCase[], j2g: string | undefined) {
  const j2gResults = j2g === undefined ? [] : runJ2g(j2g, cases.map((c) => c.schema));
  const tallies = new Map<string, Map<Converter, Tally>>();
  const svcRefusals = new Map<string, number>();
  const svcUnsound: string[] = [];
  // Per suite file: test groups every instance of which passes (the unit of JSONSchemaBench's figure).
  const byFile = new Map<string, { cases: number; whole: Map<Converter, number> }>();
  for (const [i, c] of cases.entries()) {
    const file = byFile.get(c.file) ?? { cases: 0, whole: new Map(CONVERTERS.map((k) => [k, 0])) };
    byFile.set(c.file, file);
    file.cases++;
    const byConverter = new Map<Converter, Compiled>([
      ['svc', await compileSvc(llama, lib, c.schema)],
      ['node-llama-cpp', await compileNlc(llama, c.schema)],
      ['llama.cpp', await compileGbnf(llama, j2gResults[i])],
    ]);
    for (const [converter, compiled] of byConverter) {
      for (const key of [c.group, 'all']) {
        if (!tallies.has(key)) tallies.set(key, new Map(CONVERTERS.map((k) => [k, emptyTally()])));
        const t = tallies.get(key)!.get(converter)!;
        t.groups++;
        t.instances += c.tests.length;
        t.valid += c.tests.filter((x) => x.valid).length;
        t.invalid += c.tests.filter((x) => !x.valid).length;
        if (!('grammar' in compiled)) continue;
        t.compiled++;
        for (const test of c.tests) {
          const accepted = writings(test.data).some((text) => accepts(compiled.grammar, text));
          if (accepted === test.valid) t.passed++;
          if (test.valid && accepted) t.validAccepted++;
          if (!test.valid && !accepted) t.invalidRejected++;
          if (!test.valid && accepted) {
            t.unsound++;
            if (converter === 'svc' && key === 'all') svcUnsound.push(`${c.file}: ${c.description} / ${test.description}`);
          }
        }
      }
      if ('grammar' in compiled && c.tests.every((test) => writings(test.data).some((text) => accepts(compiled.grammar, text)) === test.valid)) {
        file.whole.set(converter, file.whole.get(converter)! + 1);
      }
      if (converter === 'svc' && 'refused' in compiled) svcRefusals.set(compiled.refused, (svcRefusals.get(compiled.refused) ?? 0) + 1);
    }
  }
  return { tallies, svcRefusals, svcUnsound, byFile };
}

// ---- compile time on large real schemas ----

/**
 * The largest schemas of JSONSchemaBench that svc accepts (most large real schemas use `pattern`,
 * `format` or other keywords svc refuses, and a refusal takes no time worth comparing), and how
 * many of the whole set svc accepts.
 */
function largestSchemas(dir: string, count: number): { picked: { name: string; schema: unknown }[]; total: number; accepted: number } {
  const files: { path: string; size: number }[] = [];
  for (const set of readdirSync(join(dir, 'data'))) {
    const setDir = join(dir, 'data', set);
    if (!statSync(setDir).isDirectory()) continue;
    for (const f of readdirSync(setDir)) if (f.endsWith('.json')) files.push({ path: join(setDir, f), size: statSync(join(setDir, f)).size });
  }
  const picked: { name: string; schema: unknown }[] = [];
  let accepted = 0;
  for (const { path } of files.sort((a, b) => b.size - a.size)) {
    try {
      const schema = JSON.parse(readFileSync(path, 'utf8')) as unknown;
      schemaToGbnf(schema, 'schema');
      accepted++;
      if (picked.length < count) picked.push({ name: path.slice(join(dir, 'data').length + 1), schema });
    } catch {
      // refused by svc, or not JSON
    }
  }
  return { picked, total: files.length, accepted };
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
function percentile(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!;
}

async function compileTimes(llama: Llama, lib: typeof NodeLlamaCpp, dir: string, j2g: string | undefined) {
  const { picked: schemas, total, accepted } = largestSchemas(dir, Number(flags.largest));
  const reps = Number(flags.reps);
  const svc = new Map<string, number>();
  const cpp = new Map<string, number>();
  for (const { name, schema } of schemas) {
    const times: number[] = [];
    for (let r = 0; r < reps; r++) {
      const t0 = performance.now();
      const compiled = await compileSvc(llama, lib, schema);
      times.push(performance.now() - t0);
      if (!('grammar' in compiled)) break;
    }
    if (times.length === reps) svc.set(name, median(times));
  }
  if (j2g !== undefined) {
    const runs = Array.from({ length: reps }, () => runJ2g(j2g, schemas.map((s) => s.schema)));
    for (const [i, { name }] of schemas.entries()) {
      const times: number[] = [];
      for (const run of runs) {
        const t0 = performance.now();
        const compiled = await compileGbnf(llama, run[i]);
        if (!('grammar' in compiled)) break;
        times.push(run[i]!.us / 1000 + performance.now() - t0);
      }
      if (times.length === reps) cpp.set(name, median(times));
    }
  }
  const both = [...svc.keys()].filter((k) => cpp.has(k));
  const stats = (m: Map<string, number>, keys: string[]) => keys.length === 0 ? null : { n: keys.length, p50: percentile(keys.map((k) => m.get(k)!), 50), p99: percentile(keys.map((k) => m.get(k)!), 99) };
  const sizes = schemas.map((s) => JSON.stringify(s.schema).length);
  return {
    schemas: schemas.length, total, accepted, sizeKiB: { min: Math.min(...sizes) / 1024, max: Math.max(...sizes) / 1024 }, reps,
    svc: stats(svc, [...svc.keys()]), llamaCpp: stats(cpp, [...cpp.keys()]),
    bothSvc: stats(svc, both), bothLlamaCpp: stats(cpp, both),
  };
}

// ---- report ----

const pct = (a: number, b: number): string => (b === 0 ? '–' : `${((100 * a) / b).toFixed(1)}%`);

const llama = await getLlama({ gpu: false, build: 'never', progressLogs: false, logLevel: LlamaLogLevel.disabled });
const lib = await import('node-llama-cpp');
let j2gNote = '';
let j2g: string | undefined;
const built = buildJ2g();
if (typeof built === 'string') j2g = built;
else j2gNote = `llama.cpp column not measured: ${built.skipped}`;

const cases = loadSuite(SUITE);
const suiteCommit = spawnSync('git', ['-C', SUITE, 'log', '-1', '--format=%h %cs']).stdout?.toString().trim() || 'unknown commit';
const t0 = performance.now();
const { tallies, svcRefusals, svcUnsound, byFile } = await coverage(llama, lib, cases, j2g);
const coverageSeconds = (performance.now() - t0) / 1000;
const times = JSB === undefined ? undefined : await compileTimes(llama, lib, JSB, j2g);

if (flags.json) {
  console.log(JSON.stringify({ suiteCommit, tallies: Object.fromEntries([...tallies].map(([g, m]) => [g, Object.fromEntries(m)])), svcRefusals: Object.fromEntries(svcRefusals), svcUnsound, byFile: Object.fromEntries([...byFile].map(([f, v]) => [f, { cases: v.cases, ...Object.fromEntries(v.whole) }])), times }, null, 2));
} else {
  console.log(`command: npm run bench:schema-coverage -- ${process.argv.slice(2).join(' ')}`);
  console.log(`machine: ${cpus()[0]?.model ?? 'unknown CPU'} ×${cpus().length}, load ${loadavg().map((x) => x.toFixed(2)).join(' ')}; node ${process.version}`);
  console.log(`JSON Schema Test Suite ${suiteCommit}, draft2020-12: ${cases.length} test groups, ${cases.reduce((n, c) => n + c.tests.length, 0)} instances (${coverageSeconds.toFixed(1)} s)${j2gNote ? `\n${j2gNote}` : ''}\n`);
  console.log('Instances passed (valid accepted + invalid rejected; a refused schema passes none) · schemas compiled · invalid instances a compiled grammar accepts (unsound)\n');
  console.log(`| group | ${CONVERTERS.map((c) => `${c}: passed · compiled · unsound`).join(' | ')} |`);
  console.log(`|---|${CONVERTERS.map(() => '---').join('|')}|`);
  for (const group of [...GROUPS.map(([g]) => g), 'all']) {
    const m = tallies.get(group);
    if (m === undefined) continue;
    const cells = CONVERTERS.map((c) => {
      const t = m.get(c)!;
      return `${pct(t.passed, t.instances)} (${t.passed}/${t.instances}) · ${t.compiled}/${t.groups} · ${t.unsound}`;
    });
    console.log(`| ${group === 'all' ? '**all**' : group} | ${cells.join(' | ')} |`);
  }
  const all = tallies.get('all')!;
  console.log('\nWithin compiled schemas: valid accepted / valid · invalid rejected / invalid');
  for (const c of CONVERTERS) {
    const t = all.get(c)!;
    console.log(`  ${c}: ${pct(t.validAccepted, t.valid)} of valid accepted (${t.validAccepted}/${t.valid} over all groups) · ${t.invalidRejected}/${t.invalid} invalid rejected`);
  }
  console.log('\nPer suite file, test groups all of whose instances pass (JSONSchemaBench\'s unit): svc · node-llama-cpp · llama.cpp');
  const whole = new Map(CONVERTERS.map((k) => [k, 0]));
  let groups = 0;
  for (const [file, v] of [...byFile].sort(([a], [b]) => a.localeCompare(b))) {
    groups += v.cases;
    for (const k of CONVERTERS) whole.set(k, whole.get(k)! + v.whole.get(k)!);
    console.log(`  ${file}: ${CONVERTERS.map((k) => `${v.whole.get(k)}/${v.cases}`).join(' · ')}`);
  }
  console.log(`  all: ${CONVERTERS.map((k) => `${whole.get(k)}/${groups} (${pct(whole.get(k)!, groups)})`).join(' · ')}`);
  console.log(`\nsvc refusals by keyword: ${[...svcRefusals].sort((a, b) => b[1] - a[1]).map(([k, n]) => `${k} ${n}`).join(', ')}`);
  console.log(`\nsvc unsound (${svcUnsound.length}):\n${svcUnsound.map((s) => `  ${s}`).join('\n')}`);
  if (times !== undefined) {
    const f = (s: { n: number; p50: number; p99: number } | null): string => (s === null ? 'none' : `n=${s.n} p50 ${s.p50.toFixed(2)} ms, p99 ${s.p99.toFixed(2)} ms`);
    console.log(`\nJSONSchemaBench: svc accepts ${times.accepted} of its ${times.total} schemas (${pct(times.accepted, times.total)}).`);
    console.log(`Schema → grammar on the ${times.schemas} largest of those (${times.sizeKiB.min.toFixed(0)}–${times.sizeKiB.max.toFixed(0)} KiB), median of ${times.reps} per schema:`);
    console.log(`  svc (its GBNF writer + llama.cpp parse), every schema it accepts: ${f(times.svc)}`);
    console.log(`  llama.cpp converter (C++ + llama.cpp parse), every schema it accepts:      ${f(times.llamaCpp)}`);
    console.log(`  on the schemas both accept: svc ${f(times.bothSvc)} · llama.cpp ${f(times.bothLlamaCpp)}`);
  }
}
await llama.dispose();
