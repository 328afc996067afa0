import type { EvalReport, FusionReport, IngestReport, ModeReport } from './evaluate-space.ts';

/**
 * The evaluation as text for a terminal and for docs/BENCHMARKS.md: markdown tables, which read
 * well in both. `svc spaces eval` prints this (or the report as JSON with --json).
 */

const pct = (x: number): string => `${(x * 100).toFixed(1)}%`;
const ms = (x: number): string => (Number.isNaN(x) ? '–' : x.toFixed(2));
const num = (x: number): string => x.toLocaleString('en-US');

export function formatQualityTable(modes: readonly ModeReport[]): string {
  const lines = [
    '| mode | queries | recall@5 | recall@10 | MRR@10 | answer support (top 5 passages / snippets) | p50 ms | p99 ms |',
    '|---|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const m of modes) {
    lines.push(`| ${m.mode} | ${m.queries} | ${pct(m.recallAt5)} | ${pct(m.recallAt10)} | ${m.mrr.toFixed(3)} | ${pct(m.answerSupport.passages)} / ${pct(m.answerSupport.snippets)} | ${ms(m.latency.p50Ms)} | ${ms(m.latency.p99Ms)} |`);
  }
  return lines.join('\n');
}

/** Recall@10, MRR and median latency per query kind and mode: where each retriever wins and loses. */
export function formatKindTable(modes: readonly ModeReport[]): string {
  if (modes.length === 0) return '';
  const kinds = modes[0]!.byKind.map((k) => k.kind);
  const lines = [
    `| query kind | queries | ${modes.map((m) => `${m.mode} recall@10 / MRR / p50 ms`).join(' | ')} |`,
    `|---|---:|${modes.map(() => '---:').join('|')}|`,
  ];
  for (const kind of kinds) {
    const cells = modes.map((m) => {
      const k = m.byKind.find((entry) => entry.kind === kind)!;
      return `${pct(k.recallAt10)} / ${k.mrr.toFixed(3)} / ${ms(k.p50Ms)}`;
    });
    const count = modes[0]!.byKind.find((entry) => entry.kind === kind)!.queries;
    lines.push(`| ${kind} | ${count} | ${cells.join(' | ')} |`);
  }
  return lines.join('\n');
}

/** One line: what fusion gained and lost against each single list. */
export function formatFusion(fusion: readonly FusionReport[]): string {
  if (fusion.length === 0) return '';
  return `Found in the top 10 by hybrid but not by the single mode / the reverse: ${fusion.map((f) => `${f.against} ${f.hybridOnly} / ${f.singleOnly}`).join('; ')}.`;
}

export function formatIngest(ingest: IngestReport): string {
  return `${num(ingest.documents)} documents, ${num(ingest.chunks)} chunks, ${(ingest.bytes / 1e6).toFixed(2)} MB of text in ${ingest.seconds.toFixed(2)} s: ${ingest.mbPerSecond.toFixed(2)} MB/s `
    + `(${ingest.how === 'each' ? 'addDocument one after another' : 'addDocuments'}; ${ingest.cpuSeconds.toFixed(2)} CPU s, ${ingest.mbPerCpuSecond.toFixed(2)} MB per CPU s)`;
}

export function formatEvalReport(report: EvalReport): string {
  const kinds = report.set.queriesByKind.map((k) => `${k.kind} ${k.queries}`).join(', ');
  const stale = report.stale;
  const staleRows = stale.modes.map((m) =>
    `| ${m.mode} | ${m.searches} | ${pct(m.foundBeforeChange)} | ${num(m.resultsChecked)} | ${m.staleResults} | ${pct(m.rejectionRate)} | ${pct(m.newTextFound)} |`);
  const verdict = report.hybridBeatsBoth === null
    ? 'Hybrid vs single modes: not compared (not all modes ran).'
    : `Hybrid recall@10 above both single modes: ${report.hybridBeatsBoth ? 'yes' : 'NO'}.`;
  return [
    `Space ${report.space}: embedder ${report.embedder} (${report.dimensions} dimensions)`,
    `Labelled set (seed ${String(report.set.seed)}): ${report.set.documents} documents, ${report.set.chunks} chunks, ${report.set.queries} queries (${kinds}); ${report.set.staleDocuments} stale documents (${stale.replaced} replaced, ${stale.deleted} deleted), ${stale.queries} stale queries`,
    `Ingest: ${formatIngest(report.ingest)}`,
    '',
    formatQualityTable(report.modes),
    '',
    formatKindTable(report.modes),
    '',
    'Stale memory (top 20 per search; a result is stale when its text or snippet holds an old answer span):',
    '',
    '| mode | searches | old text found before the change | results checked after | stale results | rejection | revision found |',
    '|---|---:|---:|---:|---:|---:|---:|',
    ...staleRows,
    '',
    verdict,
    formatFusion(report.fusion),
  ].join('\n');
}
