import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import type { MeasurementCounts } from '../../src/quantum/solvers/measurement-counts.ts';
import { rankTicks } from './histogram-ticks.ts';

/** `solution.measurement_counts` as the solve API answers it (docs/solvers.md, "Measurement counts"): the solver's own type. */
export type { MeasurementCounts };

const OPTIMAL = '#d55e00';
const OTHER = '#0072b2';

/**
 * A measurement histogram (uPlot bars): the listed outcomes by count, the optimal ones in their
 * own colour, the shots of the unlisted outcomes said in words under it. Bitstrings label the
 * bars while they fit, else ranks on at most 20 of them; the table beside (OutcomeTable) always names them.
 */
export function CountsHistogram(props: { id: string; counts: MeasurementCounts; title: string }) {
  const host = useRef<HTMLDivElement>(null);
  const { counts } = props;
  useEffect(() => {
    const element = host.current!;
    const xs = counts.outcomes.map((_, i) => i);
    const column = (optimal: boolean) => counts.outcomes.map((o) => (o.optimal === optimal ? o.count : null));
    const labelled = counts.outcomes.length * Math.max(4, counts.qubits) <= 120;
    const bars = uPlot.paths.bars!({ size: [0.8, 48], align: 0 });
    const plot = new uPlot(
      {
        width: Math.max(260, Math.min(720, element.clientWidth)),
        height: 260,
        scales: { x: { time: false, range: [-0.5, Math.max(0.5, xs.length - 0.5)] }, y: { range: (_u, _lo, hi) => [0, Math.max(1, hi) * 1.08] } },
        axes: [
          {
            label: labelled ? 'outcome (qubit n−1 … qubit 0)' : 'outcome rank (the table names each)',
            // Each bar named while the bitstrings fit; otherwise its rank, on every few bars only.
            splits: () => (labelled ? xs : rankTicks(xs.length)),
            values: (_u, splits) => splits.map((i) => (labelled ? counts.outcomes[i]?.bitstring ?? '' : String(i + 1))),
            ...(labelled && counts.qubits > 4 ? { rotate: -45, size: 24 + counts.qubits * 6 } : {}),
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
      },
      [xs, column(true), column(false)],
      element,
    );
    return () => plot.destroy();
  }, [counts]);
  const listed = counts.outcomes.length;
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
        <span id={`${props.id}-summary`}>
          {counts.optimal_count} of {counts.shots} shots optimal · {listed} of {counts.distinct_outcomes} outcomes shown
          {counts.other_count > 0 && ` · ${counts.other_count} shots in the others`}
        </span>
      </figcaption>
    </figure>
  );
}

/** The listed outcomes as a table: bitstring, count, whether optimal, and what the solver read in it. */
export function OutcomeTable(props: { id: string; counts: MeasurementCounts; meaning: { heading: string; of: (outcome: MeasurementCounts['outcomes'][number]) => string } }) {
  return (
    <details>
      <summary>Outcomes ({props.counts.outcomes.length})</summary>
      <div class="table-scroll" tabIndex={0} role="region" aria-label="Measured outcomes">
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
