import { quoteInput } from '../../shared/quote-input.ts';
import { RouteRefusedError } from './route-refused-error.ts';
import { PROJECT_ID, PROJECT_ID_RULE } from '../../accounts/project-id.ts';

/** The contract's route-control headers, read but not yet judged against the configuration. */
export interface RouteHeaders {
  policy: string | undefined;
  privacyTier: string | undefined;
  projectId: string | undefined;
  /** Joules; a whole number ≥ 0. */
  maxJoules: number | undefined;
  /** Milliseconds; a whole number ≥ 1. */
  maxLatencyMs: number | undefined;
}

export const ROUTE_HEADER_NAMES = ['x-svc-execution-policy', 'x-svc-privacy-tier', 'x-svc-project-id', 'x-svc-max-joules', 'x-svc-max-latency-ms'] as const;

type HeaderBag = Readonly<Record<string, string | string[] | undefined>>;

function single(headers: HeaderBag, name: string): string | undefined {
  const value = Object.hasOwn(headers, name) ? headers[name] : undefined;
  if (value === undefined) return undefined;
  // Two values for one ceiling is ambiguous: which one did the caller mean?
  if (Array.isArray(value)) throw new RouteRefusedError('invalid_route_header', `${name} was sent more than once; send it once.`, name);
  return value.trim();
}

function integer(headers: HeaderBag, name: string, min: number): number | undefined {
  const text = single(headers, name);
  if (text === undefined) return undefined;
  if (!/^\d{1,15}$/.test(text) || Number(text) < min) {
    throw new RouteRefusedError('invalid_route_header', `${name} must be a whole number of at least ${min} (got ${quoteInput(text)}).`, name);
  }
  return Number(text);
}

/** Reads the five headers (Node's lower-cased header object); malformed values are a 400 naming the header. */
export function parseRouteHeaders(headers: HeaderBag): RouteHeaders {
  const projectId = single(headers, 'x-svc-project-id');
  if (projectId !== undefined && !PROJECT_ID.test(projectId)) {
    throw new RouteRefusedError('invalid_route_header', `x-svc-project-id must be ${PROJECT_ID_RULE} (got ${quoteInput(projectId)}).`, 'x-svc-project-id');
  }
  const policy = single(headers, 'x-svc-execution-policy');
  const privacyTier = single(headers, 'x-svc-privacy-tier');
  return {
    policy: policy === '' ? undefined : policy,
    privacyTier: privacyTier === '' ? undefined : privacyTier,
    projectId: projectId === '' ? undefined : projectId,
    maxJoules: integer(headers, 'x-svc-max-joules', 0),
    maxLatencyMs: integer(headers, 'x-svc-max-latency-ms', 1),
  };
}
