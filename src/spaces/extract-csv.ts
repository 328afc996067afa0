import { parse } from 'csv-parse/sync';
import { collapseWhitespace } from './block-text.ts';
import { documentUnreadable } from './extraction-errors.ts';
import type { ExtractedDocument } from './space-document.ts';

/**
 * CSV to one table block with csv-parse: its first row is the header (the chunker repeats it
 * atop each chunk of the table), every row a line `a | b | c`. The delimiter is whichever of
 * `,` `;` tab the first line uses most outside quotes: spreadsheets in much of Europe write `;`.
 * A malformed file (an unclosed quote, rows of different widths) is refused, not half-read.
 */
export function extractCsv(text: string): ExtractedDocument {
  let rows: string[][];
  try {
    rows = parse(text, {
      delimiter: sniffDelimiter(text),
      bom: true,
      skip_empty_lines: true,
      relax_column_count: false,
      // One record may not swallow the whole file through a stray quote.
      max_record_size: 1 << 20,
    }) as string[][];
  } catch (error) {
    throw documentUnreadable(`The CSV file cannot be read: ${error instanceof Error ? error.message : String(error)}`, error);
  }
  const lines = rows.map((row) => row.map(collapseWhitespace).join(' | ')).filter((line) => line.replaceAll('|', '').trim() !== '');
  if (lines.length === 0) return { format: 'csv', blocks: [] };
  return { format: 'csv', blocks: [{ kind: 'table', text: lines.join('\n'), ...(lines.length > 1 ? { headerRows: 1 } : {}) }] };
}

function sniffDelimiter(text: string): string {
  const counts = new Map<string, number>([[',', 0], [';', 0], ['\t', 0]]);
  let quoted = false;
  for (let i = 0; i < text.length && i < 65_536; i++) {
    const c = text[i]!;
    if (c === '"') quoted = !quoted;
    else if (!quoted && c === '\n') break;
    else if (!quoted && counts.has(c)) counts.set(c, counts.get(c)! + 1);
  }
  let best = ',';
  for (const [delimiter, count] of counts) if (count > counts.get(best)!) best = delimiter;
  return best;
}
