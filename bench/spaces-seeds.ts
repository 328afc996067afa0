/**
 * The labelled-set evaluation (`svc spaces eval`) over several seeds and built-in embedder
 * versions, side by side: recall@10 per mode, per query kind, and whether hybrid is above both
 * single modes. A change tuned on one seed's set has to hold on sets it never saw; the report
 * says which seeds were looked at while tuning (`--tuned`) and which were held out.
 *
 * Usage: npm run bench:spaces-seeds [-- --seeds 1,2,3,21,22 --tuned 1,2,3 --embedders svc-hashed-embed-v1,svc-hashed-embed-v2 --json]
 */
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { HashedEmbedder, hashedEmbedderVersion } from '../src/spaces/hashed-embedder.ts';
import type { EvalReport } from '../src/spaces/eval/evaluate-space.ts';
import { runSpacesEval } from '../src/spaces/eval/run-spaces-eval.ts';
import { QUERY_KINDS } from '../src/spaces/eval/labelled-set.ts';

const { values: flags } = parseArgs({
  options: {
    seeds: { type: 'string', default: '1,2,3,21,22' },
    tuned: { type: 'string', default: '1,2,3' },
    embedders: { type: 'string', default: 'svc-hashed-embed-v1,svc-hashed-embed-v2' },
    json: { type: 'boolean', default: false },
  },
});
const list = (value: string) => value.split(',').map((s) => s.trim()).filter((s) => s !== '');
const seeds = list(flags.seeds).map((s) => (/^\d+$/.test(s) ? Number(s) : s));
const tuned = new Set(list(flags.tuned));
const embedders = list(flags.embedders).map((id) => {
  const version = hashedEmbedderVersion(id);
  if (version === undefined) throw new Error(`--embedders: ${id} is not a built-in embedder`);
  return new HashedEmbedder({ version });
});

const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
const started = loadavg()[0]!;
const reports: EvalReport[] = [];
for (const embedder of embedders) {
  for (const seed of seeds) {
    process.stderr.write(`${embedder.id}, seed ${seed}…\n`);
    reports.push(await runSpacesEval({ seed, embedder }));
  }
}

if (flags.json) {
  console.log(JSON.stringify(reports.map((r) => ({ embedder: r.embedder, seed: r.set.seed, hybridBeatsBoth: r.hybridBeatsBoth, modes: r.modes.map(({ ranks: _, ...m }) => m), fusion: r.fusion })), null, 2));
} else {
  const recall = (r: EvalReport, mode: string) => r.modes.find((m) => m.mode === mode)!.recallAt10;
  console.log(`load average ${started.toFixed(1)} → ${loadavg()[0]!.toFixed(1)}; seeds tuned on: ${[...tuned].join(', ') || 'none'}\n`);
  console.log('| embedder | seed | hybrid | bm25 | dense | hybrid above both | hybrid found / lost vs bm25 |');
  console.log('|---|---|---:|---:|---:|---|---:|');
  for (const r of reports) {
    const vsBm25 = r.fusion.find((f) => f.against === 'bm25');
    const seed = `${String(r.set.seed)}${tuned.has(String(r.set.seed)) ? ' (tuned)' : ' (held out)'}`;
    console.log(`| ${r.embedder} | ${seed} | ${pct(recall(r, 'hybrid'))} | ${pct(recall(r, 'bm25'))} | ${pct(recall(r, 'dense'))} | ${r.hybridBeatsBoth ? 'yes' : 'NO'} | ${vsBm25 ? `${vsBm25.hybridOnly} / ${vsBm25.singleOnly}` : '–'} |`);
  }
  console.log('\nRecall@10 per query kind, mean over the seeds (hybrid / bm25 / dense):\n');
  console.log(`| embedder | ${QUERY_KINDS.join(' | ')} |`);
  console.log(`|---|${QUERY_KINDS.map(() => '---:').join('|')}|`);
  for (const embedder of embedders) {
    const mine = reports.filter((r) => r.embedder === embedder.id);
    const cell = (kind: string) => ['hybrid', 'bm25', 'dense'].map((mode) => {
      const values = mine.map((r) => r.modes.find((m) => m.mode === mode)!.byKind.find((k) => k.kind === kind)!.recallAt10);
      return pct(values.reduce((a, b) => a + b, 0) / values.length);
    }).join(' / ');
    console.log(`| ${embedder.id} | ${QUERY_KINDS.map(cell).join(' | ')} |`);
  }
}
