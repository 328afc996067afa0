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

/**
 * The month's Joules per UTC day as bars (uPlot). The arrays drawn are also on the element
 * (`data-days`, `data-joules`) so a test, or a curious reader, can compare them with the API.
 */
export function JoulesChart({ month, daily }: { month: string; daily: readonly DailyJoules[] }) {
  const host = useRef<HTMLDivElement>(null);
  const { days, joules } = monthSeries(month, daily);
  useEffect(() => {
    const element = host.current!;
    const width = Math.max(280, Math.min(900, element.clientWidth));
    const plot = new uPlot(
      {
        width,
        height: 220,
        // Days are UTC days: label them in UTC, not the browser's zone, or a bar moves a day.
        tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'),
        scales: { x: { time: true }, y: { range: (_u, _min, max) => [0, max > 0 ? max * 1.1 : 1] } },
        axes: [{}, { label: 'Joules', size: 60 }],
        series: [
          { label: 'day' },
          { label: 'Joules', fill: '#93c5fd', stroke: '#1d4ed8', width: 1, paths: uPlot.paths.bars!({ size: [0.7, 40] }), points: { show: false } },
        ],
        legend: { show: false },
        cursor: { show: false },
      },
      [days, joules],
      element,
    );
    return () => plot.destroy();
  }, [month, daily]);
  const total = joules.reduce((sum, j) => sum + j, 0);
  return (
    <div
      ref={host}
      id="joules-chart"
      class="chart"
      role="img"
      aria-label={`Joules per day in ${month}: ${joules.filter((j) => j > 0).length} days with usage, ${total.toFixed(3)} J in all`}
      data-days={JSON.stringify(days)}
      data-joules={JSON.stringify(joules)}
    />
  );
}
