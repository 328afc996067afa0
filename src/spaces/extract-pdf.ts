import { getDocumentProxy } from 'unpdf';
import { collapseWhitespace, pushBlock } from './block-text.ts';
import { documentUnreadable } from './extraction-errors.ts';
import type { DocumentBlock, ExtractedDocument } from './space-document.ts';

/**
 * PDF to blocks with pdf.js (through unpdf): text items with their positions become lines,
 * lines become paragraphs where the gap between them is a paragraph's, and lines set larger
 * than the body text become headings (the largest size level 1). Every block keeps its page.
 * Page numbers alone on the first or last line of a page are dropped: they are not text.
 *
 * pdf.js runs on this thread; extract-document.ts runs this module on a worker with a time and
 * memory limit, since a hostile PDF can make pdf.js spin or inflate streams without end.
 */

interface Line {
  text: string;
  /** Font size in points (the text matrix's vertical scale). */
  size: number;
  /** Baseline, in PDF space (grows upwards). */
  y: number;
  /** Where the last item on the line ends, for the gap to the next one. */
  endX: number;
}

/** A line set at least this much larger than the body text is a heading. */
const HEADING_SCALE = 1.15;
/** Headings are short; a large-print paragraph is still a paragraph. */
const MAX_HEADING_CHARS = 200;
/** A baseline gap over this many font sizes is a blank line: a new paragraph. */
const PARAGRAPH_GAP = 1.75;
const PAGE_NUMBER = /^(page\s+)?\d{1,5}(\s*(of|\/)\s*\d{1,5})?$/iu;

export async function extractPdf(bytes: Uint8Array): Promise<ExtractedDocument> {
  let pdf: Awaited<ReturnType<typeof getDocumentProxy>>;
  try {
    // pdf.js may detach the array it is given; the caller keeps its own.
    pdf = await getDocumentProxy(new Uint8Array(bytes), { verbosity: 0, useSystemFonts: false, stopAtErrors: false, isOffscreenCanvasSupported: false });
  } catch (error) {
    const name = error instanceof Error ? error.name : '';
    if (name === 'PasswordException') throw documentUnreadable('The PDF is password-protected; svc reads only unprotected PDFs.', error);
    throw documentUnreadable(`The PDF cannot be read: ${error instanceof Error ? error.message : String(error)}`, error);
  }
  try {
    const pages: Line[][] = [];
    for (let number = 1; number <= pdf.numPages; number++) {
      const page = await pdf.getPage(number);
      const content = await page.getTextContent();
      pages.push(dropPageNumbers(pageLines(content.items)));
      page.cleanup();
    }
    const title = await metadataTitle(pdf);
    return { format: 'pdf', ...(title === '' ? {} : { title }), blocks: linesToBlocks(pages), pages: pdf.numPages };
  } catch (error) {
    throw documentUnreadable(`The PDF cannot be read: ${error instanceof Error ? error.message : String(error)}`, error);
  } finally {
    await pdf.loadingTask.destroy().catch(() => undefined);
  }
}

async function metadataTitle(pdf: Awaited<ReturnType<typeof getDocumentProxy>>): Promise<string> {
  try {
    const { info } = await pdf.getMetadata();
    const title = (info as Record<string, unknown> | null)?.Title;
    return typeof title === 'string' ? collapseWhitespace(title) : '';
  } catch {
    // A broken info dictionary loses the title, not the text.
    return '';
  }
}

/** Text items (in content order) grouped into lines by their baseline. */
function pageLines(items: readonly unknown[]): Line[] {
  const lines: Line[] = [];
  let line: Line | undefined;
  for (const item of items) {
    if (typeof item !== 'object' || item === null || !('str' in item) || !('transform' in item)) continue;
    const { str, transform, width } = item as { str: string; transform: number[]; width: number };
    if (str === '') continue;
    const [, , c = 0, d = 0, x = 0, y = 0] = transform;
    const size = Math.hypot(c, d) || 1;
    if (line !== undefined && Math.abs(y - line.y) <= Math.max(line.size, size) * 0.5) {
      // Items of one line carry their own spaces, mostly; a visible gap is a space too.
      const gap = x - line.endX;
      if (gap > size * 0.15 && !line.text.endsWith(' ') && !str.startsWith(' ')) line.text += ' ';
      line.text += str;
      line.endX = x + width;
      if (str.trim() !== '') line.size = Math.max(line.size, size);
    } else {
      if (line !== undefined) lines.push(line);
      line = { text: str, size, y, endX: x + width };
    }
  }
  if (line !== undefined) lines.push(line);
  return lines.map((l) => ({ ...l, text: collapseWhitespace(l.text) })).filter((l) => l.text !== '');
}

function dropPageNumbers(lines: Line[]): Line[] {
  const isNumber = (line: Line | undefined) => line !== undefined && PAGE_NUMBER.test(line.text);
  let start = 0;
  let end = lines.length;
  if (isNumber(lines[end - 1])) end--;
  if (end > start && isNumber(lines[start])) start++;
  return lines.slice(start, end);
}

function linesToBlocks(pages: Line[][]): DocumentBlock[] {
  const body = bodySize(pages);
  const headingSizes = [...new Set(pages.flat().filter((l) => isHeading(l, body)).map((l) => roundSize(l.size)))].sort((a, b) => b - a);
  const levelOf = (line: Line) => Math.min(6, headingSizes.indexOf(roundSize(line.size)) + 1);
  const blocks: DocumentBlock[] = [];
  pages.forEach((lines, index) => {
    const page = index + 1;
    let current: { kind: 'heading' | 'paragraph'; text: string; last: Line; level: number } | undefined;
    const flush = () => {
      if (current === undefined) return;
      pushBlock(blocks, current.kind === 'heading' ? { kind: 'heading', level: current.level, text: current.text, page } : { kind: 'paragraph', text: current.text, page });
      current = undefined;
    };
    for (const line of lines) {
      const heading = isHeading(line, body);
      const kind = heading ? 'heading' : 'paragraph';
      const level = heading ? levelOf(line) : 0;
      if (current !== undefined && current.kind === kind && current.level === level && continues(current.last, line)) {
        // A word broken over lines keeps its hyphen: dropping it would also join `well-known`.
        current.text += current.text.endsWith('-') ? line.text : ` ${line.text}`;
        current.last = line;
        continue;
      }
      flush();
      current = { kind, text: line.text, last: line, level };
    }
    flush();
  });
  return blocks;
}

/** Whether `next` goes on the paragraph `previous` is in: the next line down, at the same size. */
function continues(previous: Line, next: Line): boolean {
  const drop = previous.y - next.y;
  const size = Math.max(previous.size, next.size);
  return drop > 0 && drop <= size * PARAGRAPH_GAP && Math.abs(previous.size - next.size) <= size * 0.1;
}

function isHeading(line: Line, body: number): boolean {
  return line.size >= body * HEADING_SCALE && line.text.length <= MAX_HEADING_CHARS && /\p{L}/u.test(line.text);
}

/** The body text's size: the size most characters are set in. */
function bodySize(pages: Line[][]): number {
  const chars = new Map<number, number>();
  for (const line of pages.flat()) chars.set(roundSize(line.size), (chars.get(roundSize(line.size)) ?? 0) + line.text.length);
  let best = 0;
  let bestCount = -1;
  for (const [size, count] of chars) {
    if (count > bestCount) {
      best = size;
      bestCount = count;
    }
  }
  return best;
}

function roundSize(size: number): number {
  return Math.round(size * 2) / 2;
}
