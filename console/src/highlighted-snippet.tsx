/**
 * A search snippet with its matched words highlighted. The API marks them with «» in plain text
 * (docs/spaces.md, "Records"); they become <mark> elements here, and the text stays text: nothing
 * from a document is ever parsed as HTML.
 */
export function HighlightedSnippet({ text }: { text: string }) {
  // split with a capture group: odd indices are the marked words
  const parts = text.split(/«([^«»]*)»/);
  return <>{parts.map((part, i) => (i % 2 === 1 ? <mark key={i}>{part}</mark> : part))}</>;
}

/** A passage's place in its document: page and heading path, as one short line. */
export function passagePlace(passage: { page: number | null; heading_path: readonly string[] }): string {
  const parts = [];
  if (passage.heading_path.length > 0) parts.push(passage.heading_path.join(' › '));
  if (passage.page !== null) parts.push(`page ${passage.page}`);
  return parts.join(' · ');
}
