import { DomUtils, parseDocument } from 'htmlparser2';
import { collapseLines, collapseWhitespace, pushBlock, tidyLines } from './block-text.ts';
import { headingOrParagraph } from './extraction-limits.ts';
import type { DocumentBlock, ExtractedDocument } from './space-document.ts';

/**
 * HTML to blocks with htmlparser2: a fast, forgiving parser (broken markup from the web and
 * mammoth's DOCX output both parse) that decodes entities and builds a light tree, where a
 * spec-exact tree builder (parse5) would cost more for the same text and a DOM emulation
 * (jsdom) far more. What a reader sees becomes
 * blocks: headings with their level, paragraphs, lists (items on lines), code, tables (rows as
 * `a | b | c`); what a reader does not see (scripts, styles, navigation, the head) is dropped.
 */

type HtmlNode = ReturnType<typeof parseDocument>['children'][number];
type HtmlElement = Extract<HtmlNode, { attribs: Record<string, string> }>;
type HtmlText = Extract<HtmlNode, { data: string }>;

function isElement(node: HtmlNode): node is HtmlElement {
  return 'attribs' in node;
}

function isText(node: HtmlNode): node is HtmlText {
  return node.type === 'text';
}

/** Elements whose content is not the document's text: code, styling, chrome, form controls. */
const SKIPPED = new Set([
  'script', 'style', 'noscript', 'template', 'nav', 'head', 'title', 'svg', 'math', 'iframe', 'object', 'embed',
  'canvas', 'select', 'datalist', 'button', 'textarea', 'audio', 'video', 'map',
]);

/** Elements that end the running paragraph: what follows them starts a new one. */
const BLOCK_LEVEL = new Set([
  'html', 'body', 'main', 'article', 'section', 'div', 'p', 'header', 'footer', 'aside', 'blockquote',
  'figure', 'figcaption', 'address', 'details', 'summary', 'dl', 'dt', 'dd', 'fieldset', 'legend',
  'center', 'hgroup', 'search', 'form', 'li', 'hr', 'caption', 'tr', 'td', 'th', 'thead', 'tbody', 'tfoot',
]);

const HEADING = /^h([1-6])$/;

export function extractHtml(html: string): ExtractedDocument {
  const document = parseDocument(html, { decodeEntities: true });
  const titleElement = DomUtils.findOne((el) => el.name === 'title', document.children, true);
  const title = titleElement === null ? '' : collapseWhitespace(DomUtils.textContent(titleElement));
  const blocks = htmlToBlocks(document.children);
  return { format: 'html', ...(title === '' ? {} : { title }), blocks };
}

/** The blocks of an HTML fragment (also how markdown's raw HTML blocks and DOCX's HTML are read). */
export function htmlToBlocks(nodes: HtmlNode[]): DocumentBlock[] {
  const blocks: DocumentBlock[] = [];
  let inline = '';
  const flush = () => {
    pushBlock(blocks, { kind: 'paragraph', text: collapseLines(inline) });
    inline = '';
  };
  const walk = (node: HtmlNode): void => {
    if (isText(node)) {
      inline += node.data;
      return;
    }
    if (!isElement(node)) return;
    const name = node.name.toLowerCase();
    if (SKIPPED.has(name)) return;
    if (name === 'br') {
      inline += '\n';
      return;
    }
    const heading = HEADING.exec(name);
    if (heading !== null) {
      flush();
      pushBlock(blocks, headingOrParagraph(Number(heading[1]), inlineText(node)));
      return;
    }
    if (name === 'ul' || name === 'ol') {
      flush();
      pushBlock(blocks, { kind: 'list', text: listLines(node, 0).join('\n') });
      return;
    }
    if (name === 'pre') {
      flush();
      pushBlock(blocks, { kind: 'code', text: tidyLines(rawText(node)) });
      return;
    }
    if (name === 'table') {
      flush();
      tableBlocks(node, blocks);
      return;
    }
    const isBlock = BLOCK_LEVEL.has(name);
    if (isBlock) flush();
    for (const child of node.children) walk(child);
    if (isBlock) flush();
  };
  for (const node of nodes) walk(node);
  flush();
  return blocks;
}

/** An element's visible text on one line (a heading, a table cell, a list item's own text). */
function inlineText(element: HtmlElement, skipNestedLists = false): string {
  let text = '';
  const walk = (node: HtmlNode): void => {
    if (isText(node)) text += node.data;
    else if (isElement(node)) {
      const name = node.name.toLowerCase();
      if (SKIPPED.has(name) || (skipNestedLists && (name === 'ul' || name === 'ol'))) return;
      // Block boundaries inside a cell or an item still separate words.
      const spaced = name === 'br' || BLOCK_LEVEL.has(name) || HEADING.test(name) || name === 'pre' || name === 'table';
      if (spaced) text += ' ';
      for (const child of node.children) walk(child);
      if (spaced) text += ' ';
    }
  };
  for (const child of element.children) walk(child);
  return collapseWhitespace(text);
}

/** Text exactly as written (for `<pre>`): only the skipped elements are left out. */
function rawText(element: HtmlElement): string {
  let text = '';
  const walk = (node: HtmlNode): void => {
    if (isText(node)) text += node.data;
    else if (isElement(node)) {
      const name = node.name.toLowerCase();
      if (SKIPPED.has(name)) return;
      if (name === 'br') text += '\n';
      for (const child of node.children) walk(child);
    }
  };
  for (const child of element.children) walk(child);
  return text;
}

/** A list's items as lines (`- item`, `1. step`), nested lists indented under their item. */
function listLines(list: HtmlElement, depth: number): string[] {
  const ordered = list.name.toLowerCase() === 'ol';
  const start = ordered ? Number.parseInt(list.attribs.start ?? '1', 10) : 1;
  let number = Number.isFinite(start) ? start : 1;
  const indent = '  '.repeat(depth);
  const lines: string[] = [];
  for (const child of list.children) {
    if (!isElement(child)) {
      // Text straight inside a list (bad markup, but common) still belongs to it.
      if (isText(child) && child.data.trim() !== '') lines.push(`${indent}- ${collapseWhitespace(child.data)}`);
      continue;
    }
    const name = child.name.toLowerCase();
    if (SKIPPED.has(name)) continue;
    if (name === 'ul' || name === 'ol') {
      lines.push(...listLines(child, depth + 1));
      continue;
    }
    const text = inlineText(child, true);
    if (text !== '') lines.push(`${indent}${ordered ? `${number}.` : '-'} ${text}`);
    number++;
    for (const nested of nestedLists(child)) lines.push(...listLines(nested, depth + 1));
  }
  return lines;
}

/** The lists inside an item (however deep in its markup), not those inside them. */
function nestedLists(item: HtmlElement): HtmlElement[] {
  const found: HtmlElement[] = [];
  const walk = (node: HtmlNode): void => {
    if (!isElement(node) || SKIPPED.has(node.name.toLowerCase())) return;
    if (node.name === 'ul' || node.name === 'ol') found.push(node);
    else for (const child of node.children) walk(child);
  };
  for (const child of item.children) walk(child);
  return found;
}

/** A table's caption as a paragraph and its rows as one table block; leading `<th>` rows are its header. */
function tableBlocks(table: HtmlElement, blocks: DocumentBlock[]): void {
  const rows: string[] = [];
  let headerRows = 0;
  let inHeader = true;
  const visit = (node: HtmlNode, inThead: boolean): void => {
    if (!isElement(node)) return;
    const name = node.name.toLowerCase();
    if (name === 'caption') {
      pushBlock(blocks, { kind: 'paragraph', text: inlineText(node) });
      return;
    }
    if (name === 'tr') {
      const cells = node.children.filter((c): c is HtmlElement => isElement(c) && (c.name === 'td' || c.name === 'th'));
      const texts = cells.map((cell) => inlineText(cell));
      if (texts.every((t) => t === '')) return;
      const isHeader = inThead || cells.every((cell) => cell.name === 'th');
      if (inHeader && isHeader) headerRows++;
      else inHeader = false;
      rows.push(texts.join(' | '));
      return;
    }
    // Rows of a nested table are read as text of the cell holding it, never as rows of this one.
    if (name === 'table' || SKIPPED.has(name)) return;
    for (const child of node.children) visit(child, inThead || name === 'thead');
  };
  for (const child of table.children) visit(child, false);
  if (rows.length === 0) return;
  // A table that is all header (a layout table of <th>) has no header worth repeating.
  const header = headerRows > 0 && headerRows < rows.length ? { headerRows } : {};
  pushBlock(blocks, { kind: 'table', text: rows.join('\n'), ...header });
}
