import mammoth from 'mammoth';
import { DomUtils, parseDocument } from 'htmlparser2';
import { collapseWhitespace } from './block-text.ts';
import { htmlToBlocks } from './extract-html.ts';
import { documentUnreadable } from './extraction-errors.ts';
import { rebuildZipWithinLimits, zipLimitsFor } from './guarded-zip.ts';
import type { ExtractedDocument } from './space-document.ts';

/**
 * DOCX to blocks: the archive is unpacked within the zip-bomb limits (guarded-zip.ts), mammoth
 * turns the Word document into plain HTML (headings, lists, tables kept; styling dropped), and
 * the HTML extractor makes the blocks. The title is the one in the document's properties.
 * Images are never read (they are left out of the archive mammoth sees) and mammoth never
 * follows a linked file on this machine.
 */
export async function extractDocx(bytes: Uint8Array): Promise<ExtractedDocument> {
  const archive = await rebuildZipWithinLimits(bytes, zipLimitsFor(bytes.byteLength), (name) => name.startsWith('word/media/'));
  if (!archive.names.has('word/document.xml')) throw documentUnreadable('The file is a zip archive without word/document.xml: not a Word document.');
  let html: string;
  try {
    const result = await mammoth.convertToHtml(
      { buffer: archive.zip },
      {
        convertImage: mammoth.images.imgElement(() => Promise.resolve({ src: '' })),
        externalFileAccess: false,
        ignoreEmptyParagraphs: true,
      },
    );
    html = result.value;
  } catch (error) {
    throw documentUnreadable(`The Word document cannot be read: ${error instanceof Error ? error.message : String(error)}`, error);
  }
  const blocks = htmlToBlocks(parseDocument(html, { decodeEntities: true }).children);
  const title = coreTitle(archive.read('docProps/core.xml'));
  return { format: 'docx', ...(title === '' ? {} : { title }), blocks };
}

/** `dc:title` from the document's core properties, or ''. */
function coreTitle(xml: Buffer | undefined): string {
  if (xml === undefined) return '';
  const document = parseDocument(xml.toString('utf8'), { xmlMode: true, decodeEntities: true });
  const element = DomUtils.findOne((el) => el.name === 'dc:title', document.children, true);
  return element === null ? '' : collapseWhitespace(DomUtils.textContent(element));
}
