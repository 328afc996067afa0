import type { ComponentChildren } from 'preact';
import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { useChartWidth } from './use-chart-width.ts';
import type { MeasurementCounts } from '../../src/quantum/solvers/measurement-counts.ts';
import { formatCount, formatPercent } from './format.ts';
import { missingOptimalBar, optimalTooltip, type OptimalMeaning } from './optimal-count.ts';
import { bitstringsFit, rankLabelWidth, ROTATED_LABEL_PITCH, ticksThatFit } from './histogram-ticks.ts';

/** `solution.measurement_counts` as the solve API answers it (docs/solvers.md, "Measurement counts"): the solver's own type. */
export type { MeasurementCounts, OptimalMeaning };

const OPTIMAL = '#d55e00';
const OTHER = '#0072b2';
/** Room the y-axis (its numbers and label) takes from the chart's width, in CSS px. */
const Y_AXIS = 70;

/**
 * The one "optimal" figure the page shows: `measurement_counts.optimal_count`, the shots (of
 * this circuit's) that measured any optimal outcome, listed or not — the same outcomes the
 * histogram colours. Its tooltip (shown on hover and keyboard focus, and the anchor's
 * accessible description) says exactly that and what `meta.optimal_count` counts instead.
 */
export function OptimalCount(props: { id: string; counts: MeasurementCounts; meaning: OptimalMeaning }) {
  const { counts, meaning } = props;
  const tip = `${props.id}-tip`;
  return (
    <span class="tip">
      <span id={props.id} class="tip-anchor" tabIndex={0} aria-describedby={tip}>
        {formatCount(counts.optimal_count)} of {formatCount(counts.shots)} shots optimal ({formatPercent(counts.shots === 0 ? 0 : counts.optimal_count / counts.shots)})
      </span>
      <span role="tooltip" id={tip} class="tip-text">
        {optimalTooltip(counts, meaning)}
      </span>
    </span>
  );
}

/**
 * A measurement histogram (uPlot bars): the listed outcomes by count, the optimal ones in their
 * own colour, the shots of the unlisted outcomes said in words under it, and the one optimal
 * count with its tooltip. Bitstrings label the bars while they fit (rotated), else ranks on as
 * many bars as their labels fit without touching (fewer on a phone); the table (OutcomeTable)
 * always names each. When no bar is optimal the caption says why. The chart element carries
 * the gap between its ticks and the room a label needs (`data-tick-gap`, `data-label-room`, CSS px),
 * so a test can check that labels never run together.
 */
export function CountsHistogram(props: { id: string; counts: MeasurementCounts; title: string; meaning: OptimalMeaning; children?: ComponentChildren }) {
  const host = useRef<HTMLDivElement>(null);
  const { counts } = props;
  const shown = useChartWidth(host);
  useEffect(() => {
    const element = host.current!;
    if (shown === 0) return undefined;
    const xs = counts.outcomes.map((_, i) => i);
    const column = (optimal: boolean) => counts.outcomes.map((o) => (o.optimal === optimal ? o.count : null));
    const width = Math.max(260, Math.min(720, shown));
    const labelled = counts.outcomes.length * Math.max(4, counts.qubits) <= 120 && bitstringsFit(xs.length, width - Y_AXIS);
    const rotated = labelled && counts.qubits > 4;
    const room = labelled ? (rotated ? ROTATED_LABEL_PITCH : counts.qubits * 7 + 12) : rankLabelWidth(xs.length);
    const bars = uPlot.paths.bars!({ size: [0.8, 48], align: 0 });
    const ticks = (u: uPlot): number[] => (labelled ? xs : ticksThatFit(xs.length, u.bbox.width / uPlot.pxRatio, room));
    const plot = new uPlot(
      {
        width,
        height: 260,
        scales: { x: { time: false, range: [-0.5, Math.max(0.5, xs.length - 0.5)] }, y: { range: (_u, _lo, hi) => [0, Math.max(1, hi) * 1.08] } },
        axes: [
          {
            label: labelled ? 'outcome (qubit n−1 … qubit 0)' : 'outcome rank (the table names each)',
            splits: (u) => ticks(u),
            values: (_u, splits) => splits.map((i) => (labelled ? counts.outcomes[i]?.bitstring ?? '' : String(i + 1))),
            ...(rotated ? { rotate: -45, size: 24 + counts.qubits * 6 } : {}),
          },
          { label: 'shots' },
        ],
        series: [
          { label: 'outcome' },
          { label: 'optimal', fill: OPTIMAL, stroke: OPTIMAL, paths: bars, points: { show: false } },
          { label: 'other', fill: OTHER, stroke: OTHER, paths: bars, points: { show: false } },
        ],
        legend: { show: false },
        cursor: { show: false },
        hooks: {
          draw: [
            (u) => {
              const at = ticks(u).map((i) => u.valToPos(i, 'x'));
              const gap = at.slice(1).reduce((least, x, i) => Math.min(least, x - at[i]!), Infinity);
              element.dataset['tickGap'] = String(Number.isFinite(gap) ? Math.round(gap) : 9999);
              element.dataset['labelRoom'] = String(room);
            },
          ],
        },
      },
      [xs, column(true), column(false)],
      element,
    );
    return () => plot.destroy();
  }, [counts, shown]);
  const listed = counts.outcomes.length;
  const missing = missingOptimalBar(counts, props.meaning.noneExist);
  return (
    <figure class="chart-figure">
      <div
        ref={host}
        class="chart"
        id={props.id}
        role="img"
        aria-label={`${props.title}: ${listed} most frequent of ${counts.distinct_outcomes} outcomes over ${counts.shots} shots; ${counts.optimal_count} shots measured an optimal outcome`}
      />
      <figcaption class="legend">
        <span><span class="swatch" style={{ background: OPTIMAL }} aria-hidden="true" />optimal</span>
        <span><span class="swatch" style={{ background: OTHER }} aria-hidden="true" />not optimal</span>
        <OptimalCount id={`${props.id}-optimal`} counts={counts} meaning={props.meaning} />
        <span id={`${props.id}-summary`}>
          {listed} of {formatCount(counts.distinct_outcomes)} outcomes shown
          {counts.other_count > 0 && ` · ${formatCount(counts.other_count)} shots in the others`}
        </span>
      </figcaption>
      {missing !== undefined && <p class="muted" id={`${props.id}-no-optimal`}>{missing}</p>}
      {props.children}
    </figure>
  );
}

/** The listed outcomes as a table: bitstring, count, whether optimal, and what the solver read in it. */
export function OutcomeTable(props: { id: string; counts: MeasurementCounts; label?: string; meaning: { heading: string; of: (outcome: MeasurementCounts['outcomes'][number]) => string } }) {
  return (
    <details>
      <summary>Outcomes ({props.counts.outcomes.length})</summary>
      <div class="table-scroll" tabIndex={0} role="region" aria-label={props.label ?? 'Measured outcomes'}>
        <table id={props.id}>
          <thead><tr><th scope="col">Bitstring</th><th scope="col">Count</th><th scope="col">Optimal</th><th scope="col">{props.meaning.heading}</th></tr></thead>
          <tbody>
            {props.counts.outcomes.map((o) => (
              <tr key={o.index} data-optimal={o.optimal}>
                <th scope="row"><code>{o.bitstring}</code></th>
                <td>{o.count}</td>
                <td>{o.optimal ? 'yes' : ''}</td>
                <td>{props.meaning.of(o)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </details>
  );
}
