import { ApiError } from '../../shared/api-error.ts';

/**
 * Why the planner (or the Joule pre-check) will not run a request, decided before any backend
 * is called. An ApiError, so the hosted error handler maps it to the envelope like any other;
 * `code` is stable and documented in docs/hosted.md ("Routing and Joules").
 */
export type RouteRefusalCode =
  | 'unknown_execution_policy'
  | 'unknown_privacy_tier'
  | 'invalid_route_header'
  | 'model_not_found'
  | 'model_not_on_policy'
  | 'no_backend_for_privacy_tier'
  | 'enterprise_plan_required'
  | 'joule_ceiling_too_low';

const STATUS = new Map<RouteRefusalCode, { status: number; type: string }>([
  ['unknown_execution_policy', { status: 400, type: 'invalid_request_error' }],
  ['unknown_privacy_tier', { status: 400, type: 'invalid_request_error' }],
  ['invalid_route_header', { status: 400, type: 'invalid_request_error' }],
  ['model_not_found', { status: 404, type: 'invalid_request_error' }],
  ['model_not_on_policy', { status: 400, type: 'invalid_request_error' }],
  ['no_backend_for_privacy_tier', { status: 400, type: 'invalid_request_error' }],
  ['enterprise_plan_required', { status: 403, type: 'permission_error' }],
  ['joule_ceiling_too_low', { status: 400, type: 'invalid_request_error' }],
]);

export class RouteRefusedError extends ApiError {
  override readonly code: RouteRefusalCode;

  constructor(code: RouteRefusalCode, message: string, param: string | null = null) {
    const { status, type } = STATUS.get(code) ?? { status: 400, type: 'invalid_request_error' };
    super({ status, type, code, message, param });
    this.name = 'RouteRefusedError';
    this.code = code;
  }
}
