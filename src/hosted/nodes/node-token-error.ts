import { ApiError } from '../../shared/api-error.ts';

/** 401 on `/api/nodes/*`: no node token, or one the gateway was not given (`--node-token-hash`). */
export class NodeTokenError extends ApiError {
  constructor() {
    super({
      status: 401,
      type: 'authentication_error',
      code: 'node_token_invalid',
      message: 'A node heartbeat needs Authorization: Bearer <node token> with a token this gateway was given (--node-token-hash); create one with `svc hosted node-token create`.',
    });
    this.name = 'NodeTokenError';
  }
}

/** 503 on `/api/nodes/*` when this gateway takes no nodes (no --node-token-hash) or its registry is down. */
export class NodesUnavailableError extends ApiError {
  constructor(message: string, cause?: unknown) {
    super({ status: 503, type: 'server_error', code: 'nodes_unavailable', message, retryAfterSeconds: 5, cause });
    this.name = 'NodesUnavailableError';
  }
}
