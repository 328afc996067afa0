/**
 * The extraction process (extraction-worker.ts starts it): reads one document per IPC message
 * with the in-process extractors and sends back the document, an ApiError by value, or
 * (anything else) a detail. Its memory is bounded from outside; an allocation that fails inside
 * it (a RangeError for a buffer or a string past what the bound leaves) is
 * `document_too_complex`, and a text past the output bound is `document_expands_too_far`,
 * checked here so a huge result never crosses into the daemon.
 */
import { failedTaskReply } from '../shared/task-reply.ts';
import { decodeDocumentText, extractText } from './extract-text.ts';
import { documentTooComplex, unsupportedDocumentType } from './extraction-errors.ts';
import { requireBoundedOutput } from './extraction-limits.ts';
import type { ExtractionReply, ExtractionTask } from './extraction-worker.ts';
import type { ExtractedDocument } from './space-document.ts';

/** What V8 and Node say when an allocation past the memory bound fails without killing the process. */
const ALLOCATION_FAILED = /Array buffer allocation failed|Failed to allocate memory|Invalid (string|array|typed array) length|out of memory|Cannot allocate memory|ENOMEM/i;

async function extract(task: ExtractionTask): Promise<ExtractedDocument> {
  if (task.text !== undefined) return extractText(task.text, task.format, task.param);
  // pdf.js and mammoth load on first use: a process started for a small markdown file starts fast.
  if (task.format === 'pdf') return (await import('./extract-pdf.ts')).extractPdf(task.bytes);
  if (task.format === 'docx') return (await import('./extract-docx.ts')).extractDocx(task.bytes);
  const text = decodeDocumentText(task.bytes);
  if (text === null) throw unsupportedDocumentType('The file is binary, not text.');
  return extractText(text, task.format, task.param);
}

/** Whether `error`, or anything in its cause chain, is an allocation that failed. */
function allocationFailed(error: unknown): boolean {
  for (let e = error, depth = 0; e instanceof Error && depth < 8; e = e.cause, depth++) {
    if (ALLOCATION_FAILED.test(e.message)) return true;
  }
  return false;
}

async function handle(task: ExtractionTask): Promise<ExtractionReply> {
  try {
    return { id: task.id, ok: true, value: requireBoundedOutput(await extract(task), task.maxTextBytes, task.param) };
  } catch (error) {
    const known = allocationFailed(error)
      ? documentTooComplex(`Reading the document needs more than the ${task.memoryMb} MiB of memory extraction may use; it was stopped.`, task.param)
      : error;
    return failedTaskReply(task.id, known);
  }
}

process.on('message', (task: ExtractionTask) => {
  void handle(task).then((reply) => process.send!(reply));
});
// The daemon is gone (or let this process go): nothing is left to read for.
process.on('disconnect', () => process.exit(0));
