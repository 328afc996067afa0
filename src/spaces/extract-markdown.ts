import { decodeHTML } from 'entities';
import { parseDocument } from 'htmlparser2';
import { marked, type Token, type Tokens } from 'marked';
import { collapseLines, collapseWhitespace, pushBlock, tidyLines } from './block-text.ts';
import { htmlToBlocks } from './extract-html.ts';
import { headingOrParagraph, MAX_HEADING_CHARS } from './extraction-limits.ts';
import type { DocumentBlock, ExtractedDocument } from './space-document.ts';

/**
 * Markdown to blocks with marked's lexer (the tokens, never the HTML renderer): headings keep
 * their depth, lists their items, code its lines, tables their rows. Inline markup becomes the
 * text a reader sees (`**bold**` → `bold`, a link → its text). A leading `# Title` is the title.
 */
export function extractMarkdown(markdown: string): ExtractedDocument {
  const tokens = marked.lexer(markdown, { gfm: true });
  const blocks: DocumentBlock[] = [];
  for (const token of tokens) tokenBlocks(token, blocks);
  const first = tokens.find((t) => t.type !== 'space');
  const heading = first?.type === 'heading' && (first as Tokens.Heading).depth === 1 ? collapseWhitespace(inlineText((first as Tokens.Heading).tokens)) : '';
  const title = heading.length <= MAX_HEADING_CHARS ? heading : '';
  return { format: 'markdown', ...(title === '' ? {} : { title }), blocks };
}

function tokenBlocks(token: Token, blocks: DocumentBlock[]): void {
  switch (token.type) {
    case 'heading': {
      const heading = token as Tokens.Heading;
      pushBlock(blocks, headingOrParagraph(heading.depth, collapseWhitespace(inlineText(heading.tokens))));
      return;
    }
    case 'paragraph':
    case 'text': {
      const { tokens, text } = token as Tokens.Paragraph | Tokens.Text;
      pushBlock(blocks, { kind: 'paragraph', text: collapseLines(tokens === undefined ? decodeHTML(text) : inlineText(tokens)) });
      return;
    }
    case 'list':
      pushBlock(blocks, { kind: 'list', text: listLines(token as Tokens.List, 0).join('\n') });
      return;
    case 'code':
      pushBlock(blocks, { kind: 'code', text: tidyLines((token as Tokens.Code).text) });
      return;
    case 'table': {
      const table = token as Tokens.Table;
      const row = (cells: Tokens.TableCell[]) => cells.map((cell) => collapseWhitespace(inlineText(cell.tokens))).join(' | ');
      const rows = [row(table.header), ...table.rows.map(row)].filter((line) => line.replaceAll('|', '').trim() !== '');
      const hasHeader = table.header.some((cell) => cell.text.trim() !== '') && rows.length > 1;
      pushBlock(blocks, { kind: 'table', text: rows.join('\n'), ...(hasHeader ? { headerRows: 1 } : {}) });
      return;
    }
    case 'blockquote':
      for (const inner of (token as Tokens.Blockquote).tokens) tokenBlocks(inner, blocks);
      return;
    case 'html':
      // Raw HTML blocks (a <details>, a <table>) are read as HTML, not shown as markup.
      blocks.push(...htmlToBlocks(parseDocument((token as Tokens.HTML).text, { decodeEntities: true }).children));
      return;
    default:
      // space, hr, def: nothing a reader reads. Extensions' tokens: their inner tokens, if any.
      if ('tokens' in token && Array.isArray(token.tokens) && token.type !== 'space') {
        for (const inner of token.tokens as Token[]) tokenBlocks(inner, blocks);
      }
  }
}

/** A list's items as lines, nested lists indented under their item; task items keep their box. */
function listLines(list: Tokens.List, depth: number): string[] {
  const lines: string[] = [];
  const start = typeof list.start === 'number' ? list.start : 1;
  const indent = '  '.repeat(depth);
  list.items.forEach((item, i) => {
    const marker = list.ordered ? `${start + i}.` : '-';
    const box = item.task ? (item.checked === true ? '[x] ' : '[ ] ') : '';
    const own: string[] = [];
    const nested: string[] = [];
    for (const inner of item.tokens) {
      if (inner.type === 'list') nested.push(...listLines(inner as Tokens.List, depth + 1));
      else if (inner.type === 'code') own.push((inner as Tokens.Code).text);
      else if (inner.type === 'text' || inner.type === 'paragraph') {
        const { tokens, text } = inner as Tokens.Text;
        own.push(tokens === undefined ? decodeHTML(text) : inlineText(tokens));
      } else if ('tokens' in inner && Array.isArray(inner.tokens)) own.push(inlineText(inner.tokens as Token[]));
    }
    const text = collapseWhitespace(own.join(' '));
    if (text !== '' || box !== '') lines.push(`${indent}${marker} ${box}${text}`.trimEnd());
    lines.push(...nested);
  });
  return lines;
}

/** Inline tokens as plain text: emphasis and links by their text, images by their alt text, tags dropped. */
function inlineText(tokens: Token[]): string {
  let text = '';
  for (const token of tokens) {
    switch (token.type) {
      case 'text': {
        const t = token as Tokens.Text;
        text += t.tokens === undefined ? decodeHTML(t.text) : inlineText(t.tokens);
        break;
      }
      case 'escape':
        text += (token as Tokens.Escape).text;
        break;
      case 'codespan':
        // A code span is literal: `&amp;` inside one is those five characters.
        text += (token as Tokens.Codespan).text;
        break;
      case 'image':
        text += decodeHTML((token as Tokens.Image).text);
        break;
      case 'br':
        text += '\n';
        break;
      case 'html':
      case 'tag':
      case 'checkbox':
        break;
      default:
        if ('tokens' in token && Array.isArray(token.tokens)) text += inlineText(token.tokens as Token[]);
        else if ('text' in token && typeof token.text === 'string') text += decodeHTML(token.text);
    }
  }
  return text;
}
