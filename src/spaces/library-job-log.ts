import { errorTypeOf, type JobLog, type JobOutcome } from '../shared/job-log.ts';
import { delegatingLibrary } from './delegating-library.ts';
import type { AddDocumentResult, SpaceLibrary } from './space-types.ts';

/**
 * The library, recording each ingest in the job log: one `ingest` job per call that adds or
 * replaces documents (a JSON document, a whole upload job, a replacement), named after the
 * embedder that did the work. Whoever calls it (a route, an upload job) is covered once.
 */
export function withJobLog(library: SpaceLibrary, jobLog: JobLog, embedder: string): SpaceLibrary {
  const timed = async <T>(work: () => Promise<T>, settle: (result: T) => { outcome: JobOutcome; errorType: string | null }): Promise<T> => {
    const started = performance.now();
    const finish = (outcome: JobOutcome, errorType: string | null) =>
      jobLog.record({ kind: 'ingest', name: embedder, durationMs: performance.now() - started, outcome, errorType });
    let result: T;
    try {
      result = await work();
    } catch (error) {
      finish('failed', errorTypeOf(error));
      throw error;
    }
    const { outcome, errorType } = settle(result);
    finish(outcome, errorType);
    return result;
  };
  const completed = () => ({ outcome: 'completed' as const, errorType: null });
  // An upload is one job: completed if any file went in; the first failed file's code says what went wrong.
  const ofResults = (results: AddDocumentResult[]) => {
    const failed = results.find((r) => !r.ok);
    return {
      outcome: results.length > 0 && results.every((r) => !r.ok) ? ('failed' as const) : ('completed' as const),
      errorType: failed === undefined || failed.ok ? null : errorTypeOf(failed.error),
    };
  };
  return delegatingLibrary(library, {
    addDocument: (space, input) => timed(() => library.addDocument(space, input), completed),
    addDocuments: (space, inputs, onResult) => timed(() => library.addDocuments(space, inputs, onResult), ofResults),
    replaceDocument: (space, documentId, input) => timed(() => library.replaceDocument(space, documentId, input), completed),
  });
}
