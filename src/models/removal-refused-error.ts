import { UserError } from '../shared/user-error.ts';

/** `svc models rm` will not delete this model; the message says why and what to do instead. */
export class RemovalRefusedError extends UserError {
  override name = 'RemovalRefusedError';
}
