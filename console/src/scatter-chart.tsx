import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { useChartWidth } from './use-chart-width.ts';

export interface ScatterPoint {
  x: number;
  y: number;
  /** Written beside the point when the group is `named`. */
  name?: string;
}

export interface ScatterGroup {
  label: string;
  colour: string;
  /** Point diameter in CSS pixels. */
  size: number;
  points: readonly ScatterPoint[];
  /** Fill (default: `colour`); a translucent one draws regions under the data points. */
  fill?: string;
  /** false: no outline in `colour` (region dots). */
  outline?: boolean;
  named?: boolean;
}

/**
 * Points on a plane (uPlot, points only), one series per group in the given order (later groups
 * on top). uPlot's data is aligned on one ascending x column, so every point gets its own x slot
 * and each series is null where the slot is not its own (as the portfolio chart does).
 */
export function ScatterChart(props: { id: string; groups: readonly ScatterGroup[]; xLabel: string; yLabel: string; description: string; square?: boolean }) {
  const host = useRef<HTMLDivElement>(null);
  const shown = useChartWidth(host);
  useEffect(() => {
    const element = host.current!;
    if (shown === 0) return undefined;
    const slots = props.groups
      .flatMap((g, group) => g.points.map((p) => ({ ...p, group })))
      .sort((a, b) => a.x - b.x);
    const xs = slots.map((p) => p.x);
    const ys = slots.map((p) => p.y);
    const pad = (values: number[]): [number, number] => {
      const lo = Math.min(...values);
      const hi = Math.max(...values);
      const margin = (hi - lo) * 0.06 || 1;
      return [lo - margin, hi + margin];
    };
    const width = Math.max(260, Math.min(640, shown));
    const plot = new uPlot(
      {
        width,
        height: props.square === true ? Math.min(width, 480) : 320,
        scales: { x: { time: false, range: () => pad(xs) }, y: { range: () => pad(ys) } },
        axes: [{ label: props.xLabel }, { label: props.yLabel }],
        series: [
          { label: props.xLabel },
          ...props.groups.map((g) => ({
            label: g.label,
            stroke: g.colour,
            paths: () => null,
            points: { show: true, size: g.size, fill: g.fill ?? g.colour, stroke: g.outline === false ? 'transparent' : g.colour, width: g.outline === false ? 0 : 1.5 },
          })),
        ],
        legend: { show: false },
        cursor: { show: false },
        hooks: {
          draw: [
            (u) => {
              const ctx = u.ctx;
              ctx.save();
              ctx.fillStyle = '#111';
              ctx.font = `${12 * devicePixelRatio}px system-ui, sans-serif`;
              for (const p of slots) {
                if (p.name === undefined || props.groups[p.group]?.named !== true) continue;
                ctx.fillText(p.name, u.valToPos(p.x, 'x', true) + 8 * devicePixelRatio, u.valToPos(p.y, 'y', true) - 6 * devicePixelRatio);
              }
              ctx.restore();
            },
          ],
        },
      },
      [xs, ...props.groups.map((_, group) => slots.map((p) => (p.group === group ? p.y : null)))],
      element,
    );
    return () => plot.destroy();
  }, [props.groups, props.xLabel, props.yLabel, props.square, shown]);
  return (
    <figure class="chart-figure">
      <div ref={host} class="chart" id={props.id} role="img" aria-label={props.description} />
      <figcaption class="legend">
        {props.groups.map((g) => (
          <span key={g.label}><span class="swatch" style={{ background: g.fill ?? g.colour, border: g.outline === false ? 'none' : `1.5px solid ${g.colour}` }} aria-hidden="true" />{g.label}</span>
        ))}
      </figcaption>
    </figure>
  );
}
