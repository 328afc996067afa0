import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

export interface StreamPoint {
  /** Milliseconds since the request was sent. */
  ms: number;
  /** Content chunks received so far. */
  chunks: number;
}

/**
 * Content chunks received over time for one streamed reply (uPlot): the flat start is the time
 * to first token, the slope the decode rate. Redrawn on each new point; uPlot's setData is cheap.
 */
export function StreamChart({ points }: { points: readonly StreamPoint[] }) {
  const host = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  useEffect(() => {
    const element = host.current!;
    const width = Math.max(240, Math.min(640, element.clientWidth));
    plot.current = new uPlot(
      {
        width,
        height: 180,
        scales: { x: { time: false } },
        axes: [{ label: 'ms since request' }, { label: 'chunks' }],
        series: [{ label: 'ms' }, { label: 'chunks', stroke: '#2563eb', width: 2, points: { show: false } }],
        legend: { show: false },
        cursor: { show: false },
      },
      [[], []],
      element,
    );
    return () => {
      plot.current?.destroy();
      plot.current = null;
    };
  }, []);
  useEffect(() => {
    plot.current?.setData([points.map((p) => p.ms), points.map((p) => p.chunks)]);
  }, [points]);
  return <div ref={host} class="chart" role="img" aria-label={`Chunks received over time: ${points.length} points`} />;
}
