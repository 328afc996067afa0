/**
 * A search snippet with its matched words highlighted. The API wraps them in «» in plain text
 * and says where they are in `snippet_marks` (docs/spaces.md, "Records"): the marks are drawn
 * from those offsets, never by finding « » in the text, which a document may hold itself. The
 * API's « » around each mark are left out; everything else stays text: nothing from a document
 * is ever parsed as HTML. `shown` (default: all of `marks`) are the marks drawn as <mark>; the
 * others are plain text (query-marks.ts leaves stop words unmarked).
 */
export function HighlightedSnippet({ text, marks, shown = marks }: {
  text: string;
  marks: readonly (readonly [number, number])[];
  shown?: readonly (readonly [number, number])[];
}) {
  const drawn = new Set(shown.map(([start]) => start));
  const parts = [];
  let at = 0;
  for (const [start, end] of marks) {
    // Offsets out of order or outside the text are skipped rather than drawn wrong.
    if (start < at + 1 || end > text.length - 1 || end < start) continue;
    const word = text.slice(start, end);
    parts.push(text.slice(at, start - 1), drawn.has(start) ? <mark key={start}>{word}</mark> : word);
    at = end + 1;
  }
  parts.push(text.slice(at));
  return <>{parts}</>;
}

/** A passage's place in its document: page and heading path, as one short line. */
export function passagePlace(passage: { page: number | null; heading_path: readonly string[] }): string {
  const parts = [];
  if (passage.heading_path.length > 0) parts.push(passage.heading_path.join(' › '));
  if (passage.page !== null) parts.push(`page ${passage.page}`);
  return parts.join(' · ');
}
