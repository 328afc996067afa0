import { pushBlock, tidyLines } from './block-text.ts';
import type { DocumentBlock, ExtractedDocument } from './space-document.ts';

/**
 * Plain text: paragraphs are what blank lines separate, their line breaks kept (an address, a
 * poem). Nothing is guessed to be a heading: a short line in capitals is as often a warning as a
 * title, and a wrong heading would mislabel every chunk under it.
 */
export function extractPlainText(text: string): ExtractedDocument {
  const blocks: DocumentBlock[] = [];
  for (const paragraph of text.split(/\n[^\S\n]*\n/u)) pushBlock(blocks, { kind: 'paragraph', text: tidyLines(paragraph) });
  return { format: 'text', blocks };
}
