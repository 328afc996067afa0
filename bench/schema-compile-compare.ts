/**
 * Schema-to-grammar compile time of svc's writer at two commits, side by side in one process, on
 * the same JSONSchemaBench schemas (guidance-ai/jsonschemabench, data/*), with llama.cpp's
 * converter on those schemas too. bench:schema-coverage times "the largest schemas svc accepts",
 * and a writer that accepts more keywords accepts other (larger) schemas: its p50 then moves with
 * the set as well as with the writer. Here the set is fixed (the largest schemas both commits
 * accept), each schema is compiled by both writers in turn (alternating which goes first), so
 * machine load touches both alike, and the set effect is reported apart.
 *
 * Usage: node bench/schema-compile-compare.ts --before <checkout of the older commit> --jsonschemabench <dir>
 *        [--largest 100] [--reps 5] [--j2g <prebuilt llama.cpp converter CLI from bench:schema-coverage>]
 * The other checkout needs its own node_modules (a hard-linked copy is enough).
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { getLlama, LlamaLogLevel, type Llama } from 'node-llama-cpp';
import { compiledGrammar } from '../src/inference/response-format-grammar.ts';
import { schemaToGbnf } from '../src/inference/schema-gbnf-writer.ts';

const { values: flags } = parseArgs({
  options: {
    before: { type: 'string' },
    jsonschemabench: { type: 'string' },
    largest: { type: 'string', default: '100' },
    reps: { type: 'string', default: '5' },
    j2g: { type: 'string' },
  },
});
if (flags.before === undefined || flags.jsonschemabench === undefined) {
  console.error('usage: node bench/schema-compile-compare.ts --before <checkout> --jsonschemabench <dir> [--largest 100] [--reps 5] [--j2g <cli>]');
  process.exit(2);
}
type Writer = (schema: unknown, param: string) => string;
const before = (await import(pathToFileURL(resolve(flags.before, 'src/inference/schema-gbnf-writer.ts')).href) as { schemaToGbnf: Writer }).schemaToGbnf;
const after: Writer = schemaToGbnf;
const commitOf = (dir: string): string => spawnSync('git', ['-C', dir, 'log', '-1', '--format=%h']).stdout.toString().trim();
const LARGEST = Number(flags.largest);
const REPS = Number(flags.reps);

const percentile = (xs: number[], p: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!;
};
const median = (xs: number[]): number => percentile(xs, 50);
const stats = (xs: number[]): string => `p50 ${percentile(xs, 50).toFixed(2)} ms, p99 ${percentile(xs, 99).toFixed(2)} ms`;
const tryWrite = (writer: Writer, schema: unknown): string | undefined => {
  try {
    return writer(schema, 'schema');
  } catch {
    return undefined;
  }
};

// Every JSONSchemaBench schema, largest first, and which writer accepts it.
// Picked by file size, as bench:schema-coverage does; shown by compact JSON size, as it shows them.
const files: { name: string; size: number; bytes: number; schema: unknown }[] = [];
const data = join(flags.jsonschemabench, 'data');
for (const set of readdirSync(data)) {
  if (!statSync(join(data, set)).isDirectory()) continue;
  for (const f of readdirSync(join(data, set)).filter((n) => n.endsWith('.json'))) {
    try {
      const schema = JSON.parse(readFileSync(join(data, set, f), 'utf8')) as unknown;
      files.push({ name: `${set}/${f}`, size: statSync(join(data, set, f)).size, bytes: JSON.stringify(schema).length, schema });
    } catch {
      // not JSON
    }
  }
}
files.sort((a, b) => b.size - a.size);
const accepted = files.map((f) => ({ ...f, before: tryWrite(before, f.schema), after: tryWrite(after, f.schema) }));
const byBefore = accepted.filter((f) => f.before !== undefined);
const byAfter = accepted.filter((f) => f.after !== undefined);
const both = accepted.filter((f) => f.before !== undefined && f.after !== undefined).slice(0, LARGEST);
const newOnly = byAfter.slice(0, LARGEST).filter((f) => f.before === undefined);
const sameGbnf = both.filter((f) => f.before === f.after).length;

const llama: Llama = await getLlama({ gpu: false, build: 'never', progressLogs: false, logLevel: LlamaLogLevel.disabled });
const lib = await import('node-llama-cpp');
/** Writer, then llama.cpp's parse of its GBNF as a first request pays it (bench:schema-coverage's compileSvc). */
async function compile(writer: Writer, schema: unknown): Promise<{ write: number; total: number }> {
  const t0 = performance.now();
  const gbnf = writer(schema, 'schema');
  const t1 = performance.now();
  // compiledGrammar reads only model.llama; a fresh cache each time.
  await compiledGrammar({ lib, model: { llama }, grammars: new Map() } as unknown as Parameters<typeof compiledGrammar>[0], gbnf);
  return { write: t1 - t0, total: performance.now() - t0 };
}

type Times = { write: number[]; total: number[] };
async function timeSet(set: typeof both, writers: [string, Writer][]): Promise<Map<string, Times>> {
  const per = new Map(writers.map(([name]) => [name, set.map(() => ({ write: [] as number[], total: [] as number[] }))]));
  for (let rep = 0; rep < REPS; rep++) {
    for (const [i, f] of set.entries()) {
      // Alternate which writer goes first, per schema and per repetition.
      const order = (i + rep) % 2 === 0 ? writers : [...writers].reverse();
      for (const [name, writer] of order) {
        const t = await compile(writer, f.schema);
        per.get(name)![i]!.write.push(t.write);
        per.get(name)![i]!.total.push(t.total);
      }
    }
  }
  return new Map([...per].map(([name, xs]) => [name, { write: xs.map((x) => median(x.write)), total: xs.map((x) => median(x.total)) }]));
}

console.log(`command: node bench/schema-compile-compare.ts ${process.argv.slice(2).join(' ')}`);
console.log(`machine: ${cpus()[0]?.model ?? 'unknown CPU'} ×${cpus().length}, load ${loadavg().map((x) => x.toFixed(2)).join(' ')}; node ${process.version}`);
console.log(`before ${commitOf(flags.before)}, after ${commitOf('.')}; JSONSchemaBench: ${files.length} schemas, accepted before ${byBefore.length}, after ${byAfter.length}`);
console.log(`set: the ${both.length} largest both accept (${(Math.min(...both.map((f) => f.bytes)) / 1024).toFixed(0)}–${(Math.max(...both.map((f) => f.bytes)) / 1024).toFixed(0)} KiB); identical GBNF from both writers on ${sameGbnf} of them`);
console.log(`the ${LARGEST} largest the later writer accepts include ${newOnly.length} the earlier refused: ${newOnly.map((f) => `${f.name} (${(f.bytes / 1024).toFixed(0)} KiB)`).join(', ') || 'none'}\n`);

const timed = await timeSet(both, [['before', before], ['after', after]]);
const ratios = both.map((_f, i) => timed.get('after')!.total[i]! / timed.get('before')!.total[i]!);
for (const name of ['before', 'after']) {
  const t = timed.get(name)!;
  console.log(`svc ${name.padEnd(6)} (writer + llama.cpp parse), median of ${REPS} per schema: ${stats(t.total)} · writer alone ${stats(t.write)}`);
}
console.log(`after/before per schema: median ${median(ratios).toFixed(3)}×, p99 ${percentile(ratios, 99).toFixed(3)}×`);

// The set effect: the later writer on what bench:schema-coverage now picks against the common set.
const picked = byAfter.slice(0, LARGEST);
const pickedTimes = (await timeSet(picked, [['after', after]])).get('after')!;
console.log(`svc after on the ${picked.length} largest it accepts (bench:schema-coverage's set): ${stats(pickedTimes.total)}`);

if (flags.j2g !== undefined) {
  const cpp: number[] = [];
  const runs = Array.from({ length: REPS }, () => spawnSync(flags.j2g!, { input: both.map((f) => JSON.stringify(f.schema)).join('\n') + '\n', maxBuffer: 1 << 30 }).stdout.toString().trim().split('\n').map((l) => JSON.parse(l) as { ok: boolean; grammar?: string; us: number }));
  for (const [i] of both.entries()) {
    const times: number[] = [];
    for (const run of runs) {
      if (!run[i]!.ok) break;
      const t0 = performance.now();
      try {
        await llama.createGrammar({ grammar: run[i]!.grammar! });
      } catch {
        break;
      }
      times.push(run[i]!.us / 1000 + performance.now() - t0);
    }
    if (times.length === REPS) cpp.push(median(times));
  }
  console.log(`llama.cpp converter (C++ + llama.cpp parse) on the same set, ${cpp.length} it accepts: ${stats(cpp)}`);
}
console.log(`load at the end: ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);
await llama.dispose();
