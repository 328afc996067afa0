import type { RefObject } from 'preact';
import { useEffect, useState } from 'preact/hooks';

/**
 * The width of a chart's box, followed as the window changes (a phone turned, a window
 * narrowed), so a uPlot chart is drawn again at the new width with the ticks that fit it,
 * rather than kept at the width it had and clipped. 0 until first measured; changes under
 * 8 px are ignored (a scroll bar coming and going).
 */
export function useChartWidth(ref: RefObject<HTMLElement | null>): number {
  const [width, setWidth] = useState(0);
  useEffect(() => {
    const element = ref.current;
    if (element === null) return undefined;
    const observer = new ResizeObserver(() => setWidth((w) => (Math.abs(element.clientWidth - w) >= 8 ? element.clientWidth : w)));
    observer.observe(element);
    return () => observer.disconnect();
  }, []);
  return width;
}
