import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { useChartWidth } from './use-chart-width.ts';

export interface PortfolioAsset {
  id: string;
  expected_return: number;
  risk: number;
}

export interface PortfolioPoint {
  risk: number;
  expected_return: number;
}

const SELECTED = '#d55e00';
const OTHER = '#0072b2';
const PORTFOLIO = '#000000';
const CONSTRAINT = '#6b7280';

/**
 * The risk/return plane (uPlot, points only): each asset at (risk, expected return), the selected
 * ones in their own series, the portfolio the solver chose as its own point, and the constraint
 * lines max_risk (vertical) and min_return (horizontal) with the asset names drawn in uPlot's
 * draw hook. x must ascend in uPlot's aligned data, so every point gets its own x slot and each
 * series is null where the slot is not its own.
 */
export function PortfolioChart(props: { assets: readonly PortfolioAsset[]; selected: ReadonlySet<string>; portfolio: PortfolioPoint; maxRisk?: number; minReturn?: number }) {
  const host = useRef<HTMLDivElement>(null);
  const shown = useChartWidth(host);
  useEffect(() => {
    const element = host.current!;
    if (shown === 0) return undefined;
    const points = [
      ...props.assets.map((a) => ({ x: a.risk, y: a.expected_return, label: a.id, kind: props.selected.has(a.id) ? 1 : 0 })),
      { x: props.portfolio.risk, y: props.portfolio.expected_return, label: 'portfolio', kind: 2 },
    ].sort((a, b) => a.x - b.x);
    const column = (kind: number) => points.map((p) => (p.kind === kind ? p.y : null));
    const xs = points.map((p) => p.x);
    const ys = points.map((p) => p.y);
    const pad = (lo: number, hi: number) => [Math.max(0, lo - (hi - lo) * 0.15 - 0.01), hi + (hi - lo) * 0.15 + 0.01] as [number, number];
    const noLine = () => null;
    const plot = new uPlot(
      {
        width: Math.max(260, Math.min(640, shown)),
        height: 300,
        scales: {
          x: { time: false, range: () => pad(Math.min(...xs, props.maxRisk ?? Infinity), Math.max(...xs, props.maxRisk ?? -Infinity)) },
          y: { range: () => pad(Math.min(...ys, props.minReturn ?? Infinity), Math.max(...ys, props.minReturn ?? -Infinity)) },
        },
        axes: [{ label: 'risk' }, { label: 'expected return' }],
        series: [
          { label: 'risk' },
          { label: 'not selected', stroke: OTHER, paths: noLine, points: { show: true, size: 9, fill: OTHER } },
          { label: 'selected', stroke: SELECTED, paths: noLine, points: { show: true, size: 11, fill: SELECTED } },
          { label: 'portfolio', stroke: PORTFOLIO, paths: noLine, points: { show: true, size: 13, fill: PORTFOLIO } },
        ],
        legend: { show: false },
        cursor: { show: false },
        hooks: {
          draw: [
            (u) => {
              const ctx = u.ctx;
              const { left, top, width, height } = u.bbox;
              ctx.save();
              ctx.strokeStyle = CONSTRAINT;
              ctx.setLineDash([6, 4]);
              ctx.lineWidth = devicePixelRatio;
              if (props.maxRisk !== undefined) {
                const x = u.valToPos(props.maxRisk, 'x', true);
                ctx.beginPath();
                ctx.moveTo(x, top);
                ctx.lineTo(x, top + height);
                ctx.stroke();
              }
              if (props.minReturn !== undefined) {
                const y = u.valToPos(props.minReturn, 'y', true);
                ctx.beginPath();
                ctx.moveTo(left, y);
                ctx.lineTo(left + width, y);
                ctx.stroke();
              }
              ctx.fillStyle = '#111';
              ctx.font = `${12 * devicePixelRatio}px system-ui, sans-serif`;
              // The portfolio's label goes below its point: it often sits on one of its own assets.
              for (const p of points) {
                const below = p.kind === 2 ? 18 : -6;
                ctx.fillText(p.label, u.valToPos(p.x, 'x', true) + 8 * devicePixelRatio, u.valToPos(p.y, 'y', true) + below * devicePixelRatio);
              }
              ctx.restore();
            },
          ],
        },
      },
      [xs, column(0), column(1), column(2)],
      element,
    );
    return () => plot.destroy();
  }, [props.assets, props.selected, props.portfolio, props.maxRisk, props.minReturn, shown]);
  return (
    <figure class="chart-figure">
      <div ref={host} class="chart" id="portfolio-chart" role="img" aria-label={`Risk and return of ${props.assets.length} assets, ${props.selected.size} selected, and the portfolio`} />
      <figcaption class="legend">
        <span><span class="swatch" style={{ background: OTHER }} aria-hidden="true" />not selected</span>
        <span><span class="swatch" style={{ background: SELECTED }} aria-hidden="true" />selected</span>
        <span><span class="swatch" style={{ background: PORTFOLIO }} aria-hidden="true" />portfolio (equal weights)</span>
        <span>dashed: max_risk and min_return</span>
      </figcaption>
    </figure>
  );
}
