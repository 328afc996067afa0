import cookie from '@fastify/cookie';
import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { HostedContext, HostedPlugin } from '../hosted-plugin.ts';
import type { ApiKeyRecord, IssuedKey, KeyScope, KeyStore } from '../../accounts/key-store.ts';
import type { SessionStore } from '../../accounts/session-store.ts';
import { HostedError } from '../hosted-error.ts';
import { requireSession } from '../sessions/require-session.ts';
import { installSmallJsonParser } from '../sessions/small-json-parser.ts';
import { AccountDisabledError } from '../../accounts/store/account-disabled-error.ts';
import { KeyLimitReachedError } from '../../accounts/store/key-limit-reached-error.ts';
import { PROJECT_ID, PROJECT_ID_RULE } from '../../accounts/project-id.ts';

export const MAX_KEY_NAME_CHARS = 100;

const createBody = z.strictObject({
  scope: z.enum(['developer_runtime', 'supercomputer']),
  name: z.string().trim().min(1).max(MAX_KEY_NAME_CHARS).nullish(),
  project: z.string().regex(PROJECT_ID, `a project id is ${PROJECT_ID_RULE}`).nullish(),
});

// Ids are not validated beyond length: a malformed id is simply not one of the account's keys (404).
const keyId = z.string().min(1).max(200);
const revokeBody = z.strictObject({ id: keyId });
const revokeQuery = z.strictObject({ id: keyId.optional() });

/** What the API shows of a key: everything but the secret. Times are ISO 8601, UTC. */
export function keyMetadata(key: ApiKeyRecord) {
  return {
    id: key.id,
    object: 'api_key' as const,
    scope: key.scope,
    name: key.name,
    project: key.project,
    prefix: key.prefix,
    last_four: key.lastFour,
    created_at: key.createdAt.toISOString(),
    last_used_at: key.lastUsedAt?.toISOString() ?? null,
    revoked_at: key.revokedAt?.toISOString() ?? null,
  };
}

function invalid(message: string): HostedError {
  return new HostedError({ status: 400, type: 'invalid_request_error', code: 'invalid_request', message });
}

function describeIssues(error: z.ZodError): string {
  return error.issues.slice(0, 3).map((issue) => {
    const at = issue.path.length > 0 ? issue.path.join('.') : 'body';
    return issue.code === 'unrecognized_keys' ? `unknown field(s) ${issue.keys.map((k) => JSON.stringify(k.slice(0, 40))).join(', ')}` : `${at}: ${issue.message}`;
  }).join('; ');
}

/** The key to revoke: `{id}` in a JSON body or `?id=`, not both differently. */
function revokeTarget(request: FastifyRequest): string {
  const query = revokeQuery.safeParse(request.query);
  if (!query.success) throw invalid(`DELETE /api/keys takes only ?id=: ${describeIssues(query.error)}.`);
  let fromBody: string | undefined;
  if (request.body !== undefined && request.body !== null) {
    const body = revokeBody.safeParse(request.body);
    if (!body.success) throw invalid(`The body must be {"id": "<key id>"}: ${describeIssues(body.error)}.`);
    fromBody = body.data.id;
  }
  const fromQuery = query.data.id;
  if (fromBody !== undefined && fromQuery !== undefined && fromBody !== fromQuery) throw invalid('The key id in the body and in ?id= differ; send one.');
  const id = fromBody ?? fromQuery;
  if (id === undefined) throw invalid('Say which key to revoke: {"id": "<key id>"} in the body, or ?id=<key id>.');
  return id;
}

/** The store's issue under the plan's key cap, its refusals as hosted errors. */
async function issueWithinCap(store: KeyStore, accountId: string, input: { scope: KeyScope; name: string | null; project: string | null }): Promise<IssuedKey> {
  try {
    return await store.issueKeyWithinCap(accountId, input);
  } catch (error) {
    if (error instanceof KeyLimitReachedError) {
      throw new HostedError({
        status: 409, type: 'invalid_request_error', code: 'key_limit_reached',
        message: `This account already has ${error.maxActiveKeys} active keys, as many as its plan allows. Revoke one you no longer use (DELETE /api/keys), or ask your operator for a larger plan.`,
      });
    }
    // Disabled while this session was being checked (disabling ends its sessions too).
    if (error instanceof AccountDisabledError) throw new HostedError({ status: 401, type: 'authentication_error', code: 'svc_account_disabled', message: 'This account is disabled; ask your operator.' });
    throw error;
  }
}

/** `/api/keys`: issue, list and revoke the signed-in account's keys (session auth, never an API key). */
export const keyRoutes: HostedPlugin<KeyStore & SessionStore> = async (scope, { store, publicOrigins, limiter }: HostedContext<KeyStore & SessionStore>) => {
  await scope.register(cookie);
  installSmallJsonParser(scope);
  scope.decorateRequest('hostedSession', undefined);
  scope.addHook('preHandler', requireSession(store, publicOrigins, limiter));
  const noStore = { 'cache-control': 'no-store' };

  scope.post('/keys', async (request, reply) => {
    const parsed = createBody.safeParse(request.body ?? undefined);
    if (!parsed.success) throw invalid(`The body must be {scope, name?, project?}: ${describeIssues(parsed.error)}.`);
    const { account } = request.hostedSession!;
    const { scope: keyScope, name, project } = parsed.data;
    if (keyScope === 'supercomputer' && !account.plan.hostedEntitlement) {
      throw new HostedError({ status: 402, type: 'insufficient_quota', code: 'hosted_entitlement_required', message: 'A supercomputer key needs a paid hosted-compute entitlement; this account has none. A developer_runtime key needs none.' });
    }
    const issued = await issueWithinCap(store, account.id, { scope: keyScope, name: name ?? null, project: project ?? null });
    return reply.code(201).headers(noStore).send({ ...keyMetadata(issued.key), secret: issued.secret });
  });

  scope.get('/keys', async (request, reply) => {
    const keys = await store.listKeys(request.hostedSession!.account.id);
    return reply.headers(noStore).send({ object: 'list', data: keys.map(keyMetadata) });
  });

  scope.delete('/keys', async (request, reply) => {
    const id = revokeTarget(request);
    const revoked = await store.revokeKey(request.hostedSession!.account.id, id);
    // Another account's key and no key at all answer alike: nothing tells one from the other.
    if (revoked === undefined) throw new HostedError({ status: 404, type: 'invalid_request_error', code: 'api_key_not_found', message: 'No key with this id is listed for this account.' });
    return reply.headers(noStore).send(keyMetadata(revoked));
  });
};
