/**
 * The extraction worker's thread: reads one document per message with the in-process
 * extractors and posts back the document, an ApiError by value, or (anything else) a detail.
 */
import { parentPort } from 'node:worker_threads';
import { ApiError } from '../shared/api-error.ts';
import { extractDocx } from './extract-docx.ts';
import { extractPdf } from './extract-pdf.ts';
import { decodeDocumentText, extractText } from './extract-text.ts';
import { unsupportedDocumentType } from './extraction-errors.ts';
import type { ExtractionReply, ExtractionTask } from './extraction-worker.ts';
import type { ExtractedDocument } from './space-document.ts';

async function extract(task: ExtractionTask): Promise<ExtractedDocument> {
  if (task.format === 'pdf') return extractPdf(task.bytes);
  if (task.format === 'docx') return extractDocx(task.bytes);
  const text = decodeDocumentText(task.bytes);
  if (text === null) throw unsupportedDocumentType('The file is binary, not text.');
  return extractText(text, task.format, 'file');
}

parentPort!.on('message', (task: ExtractionTask) => {
  void (async () => {
    let reply: ExtractionReply;
    try {
      reply = { id: task.id, ok: true, value: await extract(task) };
    } catch (error) {
      reply = { id: task.id, ok: false, apiError: error instanceof ApiError ? error.toOptions() : null, detail: error instanceof Error ? (error.stack ?? error.message) : String(error) };
    }
    parentPort!.postMessage(reply);
  })();
});
