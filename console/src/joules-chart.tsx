import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

export interface DailyJoules {
  /** `YYYY-MM-DD`, UTC. */
  date: string;
  joules: number;
}

/** Every day of a `YYYY-MM` month as UTC midnights in seconds, with the Joules of days that had usage (0 elsewhere). */
export function monthSeries(month: string, daily: readonly DailyJoules[]): { days: number[]; joules: number[] } {
  const [year, mon] = month.split('-').map(Number) as [number, number];
  const length = new Date(Date.UTC(year, mon, 0)).getUTCDate();
  const byDate = new Map(daily.map((d) => [d.date, d.joules]));
  const days: number[] = [];
  const joules: number[] = [];
  for (let day = 1; day <= length; day++) {
    const date = `${month}-${String(day).padStart(2, '0')}`;
    days.push(Date.UTC(year, mon - 1, day) / 1000);
    joules.push(byDate.get(date) ?? 0);
  }
  return { days, joules };
}

/** A bar's label: its Joules, short (`12.3 J`, `1,234 J`), so a month of them fits over the bars. */
export function barLabel(joules: number): string {
  const digits = joules >= 100 ? 0 : joules >= 1 ? 1 : 3;
  return `${joules.toLocaleString('en-US', { maximumFractionDigits: digits })} J`;
}

/** `YYYY-MM-DD` of a UTC midnight in seconds. */
function isoDay(seconds: number): string {
  return new Date(seconds * 1000).toISOString().slice(0, 10);
}

/**
 * The month's Joules per UTC day as bars (uPlot), each day with usage labelled with its Joules
 * over its bar, the x axis in ISO days (`MM-DD`, UTC). The arrays drawn are also on the element
 * (`data-days`, `data-joules`, and `data-bar-labels`, the labels the draw hook writes) so a test,
 * or a curious reader, can compare them with the API.
 */
export function JoulesChart({ month, daily }: { month: string; daily: readonly DailyJoules[] }) {
  const host = useRef<HTMLDivElement>(null);
  const { days, joules } = monthSeries(month, daily);
  const labels = days.flatMap((day, i) => joules[i]! > 0 ? [{ date: isoDay(day), label: barLabel(joules[i]!) }] : []);
  useEffect(() => {
    const element = host.current!;
    const width = Math.max(280, Math.min(900, element.clientWidth));
    const plot = new uPlot(
      {
        width,
        height: 220,
        // Days are UTC days: label them in UTC, not the browser's zone, or a bar moves a day.
        tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'),
        scales: { x: { time: true }, y: { range: (_u, _min, max) => [0, max > 0 ? max * 1.35 : 1] } },
        // ISO days, not the locale's month/day order.
        axes: [{ values: (_u, splits) => splits.map((ts) => isoDay(ts).slice(5)) }, { label: 'Joules', size: 60 }],
        series: [
          { label: 'day' },
          { label: 'Joules', fill: '#93c5fd', stroke: '#1d4ed8', width: 1, paths: uPlot.paths.bars!({ size: [0.7, 40] }), points: { show: false } },
        ],
        legend: { show: false },
        cursor: { show: false },
        hooks: {
          // Each day's label over its bar; upright where the bars are narrow, so neighbours do not overlap.
          draw: [(u) => {
            const { ctx } = u;
            const gap = u.valToPos(days[1] ?? days[0]!, 'x', true) - u.valToPos(days[0]!, 'x', true);
            const upright = gap < 44 * uPlot.pxRatio;
            ctx.save();
            ctx.fillStyle = '#1a1a1a';
            ctx.font = `${11 * uPlot.pxRatio}px system-ui, sans-serif`;
            ctx.textAlign = upright ? 'left' : 'center';
            ctx.textBaseline = upright ? 'middle' : 'bottom';
            days.forEach((day, i) => {
              if (joules[i]! <= 0) return;
              const x = u.valToPos(day, 'x', true);
              const y = u.valToPos(joules[i]!, 'y', true) - 3 * uPlot.pxRatio;
              const text = barLabel(joules[i]!);
              if (!upright) { ctx.fillText(text, x, y); return; }
              ctx.save();
              ctx.translate(x, y);
              ctx.rotate(-Math.PI / 2);
              ctx.fillText(text, 0, 0);
              ctx.restore();
            });
            ctx.restore();
          }],
        },
      },
      [days, joules],
      element,
    );
    // The page's width changes (a phone turned, a window resized): the chart follows it.
    // Resized in the next frame, not inside the observer's callback: a size change made there is
    // a layout change the observer must report again in the same frame ("ResizeObserver loop").
    let frame = 0;
    const resize = new ResizeObserver(() => {
      cancelAnimationFrame(frame);
      frame = requestAnimationFrame(() => {
        const next = Math.max(280, Math.min(900, element.clientWidth));
        if (next !== plot.width) plot.setSize({ width: next, height: 220 });
      });
    });
    resize.observe(element);
    return () => { cancelAnimationFrame(frame); resize.disconnect(); plot.destroy(); };
  }, [month, daily]);
  const total = joules.reduce((sum, j) => sum + j, 0);
  return (
    <div
      ref={host}
      id="joules-chart"
      class="chart"
      role="img"
      aria-label={`Joules per day in ${month}: ${labels.length} days with usage, ${total.toFixed(3)} J in all${labels.length > 0 ? `: ${labels.map((l) => `${l.date} ${l.label}`).join(', ')}` : ''}`}
      data-days={JSON.stringify(days)}
      data-joules={JSON.stringify(joules)}
      data-bar-labels={JSON.stringify(labels)}
    />
  );
}
