import { ApiError } from '../../shared/api-error.ts';
import { parseJsonBody } from '../../shared/json-body.ts';
import { quoteInput } from '../../shared/quote-input.ts';

/**
 * What a solve job's body adds to `POST /api/solve`'s: only `client_job_id`. The rest is the solve
 * request, run later as it was sent. Unknown top-level fields are refused here (400), where the
 * synchronous endpoint ignores them: a job runs long after its submission, so a misspelt field
 * (`shot`, `substrat`) must be caught while the caller is still there to read the answer.
 */
const SOLVE_FIELDS = new Set(['solver', 'problem', 'substrate', 'shots', 'batch', 'seed']);

/** A client's own id for a job: 1 to 128 characters of letters, digits and `._:-`. */
const CLIENT_JOB_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export interface JobBody {
  /** The solve request, without `client_job_id`. */
  request: Record<string, unknown>;
  clientJobId: string | null;
}

export function splitJobBody(body: unknown): JobBody {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw ApiError.invalidRequest('The request body must be a JSON object.', null, 'invalid_request');
  }
  const request: Record<string, unknown> = {};
  let clientJobId: string | null = null;
  for (const [key, value] of Object.entries(body)) {
    if (key === 'client_job_id') {
      if (typeof value !== 'string' || !CLIENT_JOB_ID.test(value)) {
        throw ApiError.invalidRequest("'client_job_id' must be a string of 1 to 128 letters, digits, '.', '_', ':' or '-'.", 'client_job_id', 'invalid_client_job_id');
      }
      clientJobId = value;
    } else if (SOLVE_FIELDS.has(key)) {
      request[key] = value;
    } else {
      throw ApiError.invalidRequest(
        `Unknown field ${quoteInput(key)}: a solve job takes solver, problem, substrate, shots, batch, seed and client_job_id.`,
        key,
        'unknown_parameter',
      );
    }
  }
  return { request, clientJobId };
}

/** splitJobBody for a large body, on the intake worker: the request comes back as JSON text. */
export function splitJobJson(bytes: Uint8Array): { text: string; clientJobId: string | null } {
  const { request, clientJobId } = splitJobBody(parseJsonBody(bytes));
  return { text: JSON.stringify(request), clientJobId };
}
