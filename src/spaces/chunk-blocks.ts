import { z } from 'zod';
import { ApiError } from '../shared/api-error.ts';
import type { ChunkDraft, DocumentBlock } from './space-document.ts';
import { MAX_HEADING_CHARS } from './extraction-limits.ts';

/**
 * Blocks to chunks: passages a person can read as a citation and an embedder can take whole.
 *
 * - A chunk holds at most `targetChars` characters (default 1,000: about 200 words, a
 *   paragraph or two; under the 256-512 token windows of small embedding models, so nothing is
 *   cut off when a chunk is embedded).
 * - A chunk never crosses out of its section: a heading of the same or a higher level than the
 *   chunk's own section starts a new chunk. A deeper subsection joins the chunk only when its
 *   heading and its first block fit whole. Headings go into the text (they are words a reader
 *   searches for) and into `headingPath`, outermost first, as they stand where the chunk starts.
 * - Blocks are split only when they must: prose at a sentence end (at a word, and at a
 *   character for a run with no space, only when nothing better fits), code, lists and tables
 *   at line ends (a line longer than a whole chunk is cut hard).
 * - A chunk that continues the flow of the one before starts with up to `overlapChars` of that
 *   one's end, from a sentence or word start, so a passage cut in two is still readable on its
 *   own; never across a heading. A chunk that continues a table starts with the table's
 *   header rows instead, so every chunk of a big table says what its columns are.
 * - `page` is the page the chunk's own text starts on, and a new page starts a new chunk (a
 *   citation names one page); `position` counts from 0.
 */

export const DEFAULT_TARGET_CHARS = 1000;
export const DEFAULT_OVERLAP_CHARS = 150;

export interface ChunkOptions {
  targetChars?: number;
  overlapChars?: number;
}

/** A chunk as the chunker makes it: how much of its start repeats earlier text is said too. */
export interface ChunkDraftWithOverlap extends ChunkDraft {
  /** Leading characters of `text` that repeat the previous chunk's end or a table's header rows (0 when none). */
  overlapChars: number;
}

const chunkOptionsSchema = z
  .object({
    targetChars: z.number().int().min(200).max(20_000).default(DEFAULT_TARGET_CHARS),
    overlapChars: z.number().int().min(0).optional(),
  })
  .transform((o) => ({ targetChars: o.targetChars, overlapChars: o.overlapChars ?? Math.min(DEFAULT_OVERLAP_CHARS, Math.floor(o.targetChars / 4)) }))
  .refine((o) => o.overlapChars <= o.targetChars / 2, { message: 'overlapChars must be at most half of targetChars', path: ['overlapChars'] });

/** How a block may be cut: prose at sentences and words, the rest only at line ends. */
type CutStyle = 'prose' | 'lines';

interface Heading {
  text: string;
  level: number;
  page: number | null;
}

interface Piece {
  text: string;
  style: CutStyle;
}

export function chunkBlocks(blocks: readonly DocumentBlock[], options: ChunkOptions = {}): ChunkDraftWithOverlap[] {
  const parsed = chunkOptionsSchema.safeParse(options);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw ApiError.invalidRequest(`Invalid chunking option ${issue.path.join('.')}: ${issue.message}.`, issue.path.join('.') || null, 'invalid_chunk_options');
  }
  return new Chunker(parsed.data.targetChars, parsed.data.overlapChars).run(blocks);
}

class Chunker {
  readonly target: number;
  readonly overlap: number;
  readonly chunks: ChunkDraftWithOverlap[] = [];
  /** The headings above the current point, outermost first. */
  readonly stack: Heading[] = [];
  /** Headings met since the last body text: they open the next chunk (or join the current one). */
  pending: Heading[] = [];

  // The chunk being filled.
  text = '';
  overlapChars = 0;
  hasBody = false;
  path: string[] = [];
  /** The level of the section the chunk started in (0: before any heading). */
  level = 0;
  page: number | null = null;
  /** The last body piece placed: what the next chunk's overlap is taken from. */
  last: Piece | undefined;
  /** The overlap the next chunk may start with, set when a chunk is closed mid-flow. */
  carry = '';

  constructor(target: number, overlap: number) {
    this.target = target;
    this.overlap = overlap;
  }

  run(blocks: readonly DocumentBlock[]): ChunkDraftWithOverlap[] {
    for (const block of blocks) {
      // Every passage under a heading repeats it in its heading path: a "heading" longer than any
      // real one (from any format, PDF font sizes included) is read as the paragraph it is.
      if (block.kind === 'heading' && block.text.length <= MAX_HEADING_CHARS) this.heading(block);
      else this.body(block.kind === 'heading' ? { kind: 'paragraph', text: block.text, ...(block.page !== undefined ? { page: block.page } : {}) } : block);
    }
    this.close(false);
    if (this.pending.length > 0) this.headingsOnly();
    return this.chunks;
  }

  heading(block: DocumentBlock): void {
    const text = block.text.replace(/\s+/gu, ' ').trim();
    if (text === '') return;
    const level = Math.min(6, Math.max(1, block.level ?? 1));
    if (this.hasBody && (this.level === 0 || level <= this.level)) this.close(false);
    while (this.stack.length > 0 && this.stack.at(-1)!.level >= level) this.stack.pop();
    const heading = { text, level, page: block.page ?? null };
    this.stack.push(heading);
    this.pending.push(heading);
    // Text before a heading is never carried past it.
    this.carry = '';
  }

  body(block: DocumentBlock): void {
    const style: CutStyle = block.kind === 'paragraph' || block.kind === 'list' ? 'prose' : 'lines';
    let rest = style === 'prose' ? block.text.trim() : trimBlankLines(block.text);
    if (rest.trim() === '') return;
    const page = block.page ?? null;
    // A new page starts a new chunk: a citation names one page, so a passage never spans two.
    if (this.hasBody && page !== null && this.page !== null && page !== this.page) this.close(true);
    const header = block.kind === 'table' ? tableHeader(block, this.target) : '';
    let continuing = false;
    while (rest !== '') {
      if (this.pending.length > 0) {
        const headings = this.pending.map((h) => h.text).join('\n\n');
        if (this.hasBody) {
          // A subsection joins the chunk only whole: its heading with its first block.
          if (this.text.length + 2 + headings.length + 2 + rest.length <= this.target) {
            this.text += `\n\n${headings}\n\n${rest}`;
            this.pending = [];
            this.last = { text: rest, style };
            return;
          }
          this.close(false);
          continue;
        }
        if (headings.length > this.target / 2) {
          this.headingsOnly();
          continue;
        }
        this.open(page, this.pending[0]!.page ?? page);
        this.text = headings;
        this.pending = [];
      } else if (this.text === '') {
        this.open(page, page);
        const prefix = continuing && header !== '' ? header : this.carry;
        if (prefix !== '') {
          const sep = continuing ? (style === 'prose' ? ' ' : '\n') : '\n\n';
          const firstUnit = style === 'lines' ? firstLineLength(rest) : 0;
          // Context yields to text: a line that would not fit after it goes without it.
          if (prefix.length + sep.length + Math.min(firstUnit, this.target) <= this.target) {
            this.text = prefix + sep;
            this.overlapChars = this.text.length;
          }
        }
      }
      const sep = this.text === '' || this.text.length === this.overlapChars ? '' : '\n\n';
      const budget = this.target - this.text.length - sep.length;
      if (rest.length <= budget) {
        this.place(sep, rest, style);
        return;
      }
      if (this.hasBody) {
        // A block that fits a chunk of its own moves there whole rather than being cut, unless this chunk is nearly empty.
        const bodyLength = this.text.length - this.overlapChars;
        if (!continuing && rest.length <= this.target - this.overlap - 2 && bodyLength >= this.target / 4) {
          this.close(true);
          continue;
        }
        const cut = cutPoint(rest, budget, style, true);
        if (cut === 0) {
          this.close(true);
          continue;
        }
        rest = this.placeCut(sep, rest, cut, style);
        continuing = true;
        this.close(true);
        continue;
      }
      const cut = cutPoint(rest, budget, style, false);
      rest = this.placeCut(sep, rest, cut, style);
      continuing = true;
      this.close(true);
    }
  }

  /** Places `rest`'s first `cut` characters; returns what is left of it. */
  placeCut(sep: string, rest: string, cut: number, style: CutStyle): string {
    const piece = rest.slice(0, cut);
    this.place(sep, style === 'prose' ? piece.trimEnd() : piece.replace(/\n$/u, ''), style);
    return style === 'prose' ? rest.slice(cut).trimStart() : trimLeadingNewlines(rest.slice(cut));
  }

  place(sep: string, piece: string, style: CutStyle): void {
    this.text += sep + piece;
    this.hasBody = true;
    this.last = { text: piece, style };
  }

  /** Starts a chunk at the current point of the outline. */
  open(bodyPage: number | null, page: number | null): void {
    this.path = this.stack.map((h) => h.text);
    this.level = this.stack.at(-1)?.level ?? 0;
    this.page = page ?? bodyPage;
    this.overlapChars = 0;
  }

  /** Ends the current chunk; `midFlow`: the next chunk continues its text, so it may carry an overlap. */
  close(midFlow: boolean): void {
    if (this.hasBody) {
      this.chunks.push({ text: this.text, position: this.chunks.length, page: this.page, headingPath: this.path, overlapChars: this.overlapChars });
      this.carry = midFlow && this.last !== undefined ? overlapOf(this.last, this.overlap, (this.text.length - this.overlapChars) / 2) : '';
    } else this.carry = '';
    this.text = '';
    this.overlapChars = 0;
    this.hasBody = false;
    this.last = undefined;
  }

  /** Pending headings with no text under them (at the end, or longer than half a chunk): chunks of their own. */
  headingsOnly(): void {
    const headings = this.pending;
    this.pending = [];
    for (const heading of headings) {
      let rest = heading.text;
      while (rest !== '') {
        if (this.hasBody && this.text.length + 2 + rest.length <= this.target) {
          this.place('\n\n', rest, 'prose');
          break;
        }
        this.close(false);
        this.open(heading.page, heading.page);
        const cut = rest.length <= this.target ? rest.length : cutPoint(rest, this.target, 'prose', false);
        rest = this.placeCut('', rest, cut, 'prose');
      }
    }
    this.close(false);
  }
}

/** A table's header rows, repeated atop its continuation chunks when they take at most half a chunk. */
function tableHeader(block: DocumentBlock, target: number): string {
  const rows = block.headerRows ?? 0;
  if (rows <= 0) return '';
  const lines = trimBlankLines(block.text).split('\n');
  if (rows >= lines.length) return '';
  const header = lines.slice(0, rows).join('\n');
  return header.length <= target / 2 ? header : '';
}

/**
 * Where to cut `text` so its first part fits `budget`: the last line end, else (prose) the last
 * sentence end, else (unless `boundaryOnly`) the last space, else a hard cut. Returns 0 when
 * `boundaryOnly` and no line or sentence end fits.
 */
function cutPoint(text: string, budget: number, style: CutStyle, boundaryOnly: boolean): number {
  const window = text.slice(0, budget + 1);
  const line = window.lastIndexOf('\n', budget);
  // A line end far back would leave most of the chunk empty; prose then prefers a later sentence end.
  if (line > 0 && (style === 'lines' || line >= budget / 2)) return line + 1;
  if (style === 'prose') {
    const sentence = lastSentenceEnd(window, budget);
    if (sentence > 0 && (boundaryOnly || sentence >= budget / 3)) return sentence;
    if (line > 0) return line + 1;
  }
  if (boundaryOnly) return 0;
  const space = window.slice(0, budget).search(/\s\S*$/u);
  if (space > 0 && (style === 'prose' || space >= budget / 3)) return space + 1;
  return hardCut(text, budget);
}

/** The index just past the last sentence end (`. ` `! ` `? ` and their CJK forms) at or before `limit`. */
function lastSentenceEnd(window: string, limit: number): number {
  const pattern = /[.!?…。！？]["'”’)\]]*(\s+|(?<=[。！？]))/gu;
  let best = 0;
  for (let m = pattern.exec(window); m !== null; m = pattern.exec(window)) {
    const end = m.index + m[0].length;
    if (end > limit) break;
    best = end;
  }
  return best;
}

/** `budget`, moved back one where it would split a surrogate pair. */
function hardCut(text: string, budget: number): number {
  const c = text.charCodeAt(budget - 1);
  return c >= 0xd800 && c <= 0xdbff && budget > 1 ? budget - 1 : Math.max(1, budget);
}

/**
 * The tail of `piece` to open the next chunk with: at most `max` characters (and at most `cap`,
 * so a short chunk is not repeated whole), starting at a sentence start, else a word start;
 * for line-cut text, whole lines.
 */
function overlapOf(piece: Piece, max: number, cap: number): string {
  const limit = Math.floor(Math.min(max, cap));
  if (limit <= 0) return '';
  const { text } = piece;
  const from = Math.max(0, text.length - limit);
  if (piece.style === 'lines') {
    if (from === 0) return text;
    const line = text.indexOf('\n', from - 1);
    return line === -1 ? '' : text.slice(line + 1);
  }
  if (from === 0) return text;
  const tail = text.slice(from);
  const sentence = /[.!?…。！？]["'”’)\]]*\s+(?=\S)/u.exec(tail);
  if (sentence !== null) return tail.slice(sentence.index + sentence[0].length);
  // The first whole word of the tail: a space just before `from` means it starts a word already.
  if (/\s/u.test(text[from - 1]!)) return tail.trimStart();
  const space = tail.search(/\s\S/u);
  return space === -1 ? '' : tail.slice(space + 1);
}

function trimBlankLines(text: string): string {
  return text.replace(/^(?:[^\S\n]*\n)+/u, '').replace(/\s+$/u, '');
}

function trimLeadingNewlines(text: string): string {
  return text.replace(/^\n+/u, '');
}

function firstLineLength(text: string): number {
  const end = text.indexOf('\n');
  return end === -1 ? text.length : end;
}
