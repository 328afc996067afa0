import type { DocumentBlock } from './space-document.ts';

/** Every run of whitespace (newlines and no-break spaces included) as one space, trimmed. */
export function collapseWhitespace(text: string): string {
  return text.replace(/\s+/gu, ' ').trim();
}

/** Lines kept as they are, less trailing spaces and the blank lines before the first and after the last. */
export function tidyLines(text: string): string {
  return text.replace(/[^\S\n]+$/gmu, '').replace(/^\n+/u, '').replace(/\n+$/u, '');
}

/** Text whose line breaks mean something (a `<br>`, a poem): each line collapsed, blank lines dropped. */
export function collapseLines(text: string): string {
  return text.split('\n').map(collapseWhitespace).filter((line) => line !== '').join('\n');
}

/** Appends `block` unless its text is blank: extractors never hand the chunker empty blocks. */
export function pushBlock(blocks: DocumentBlock[], block: DocumentBlock): void {
  if (block.text.trim() !== '') blocks.push(block);
}
