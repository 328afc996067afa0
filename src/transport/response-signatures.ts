import { createHash, sign } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { httpbis } from 'http-message-signatures';
import type { TransportIdentity } from './transport-identity.ts';

/** The signature's label in `Signature` and `Signature-Input`. */
export const RESPONSE_SIGNATURE_LABEL = 'svc';

/**
 * What each response signature covers (RFC 9421): the status, the body through its digest
 * (RFC 9530), the content type, and the request it answers (method, path and query), so a signed
 * answer cannot be replayed as the answer to another request.
 */
const COVERED = ['@status', 'content-digest', '@method;req', '@path;req', '@query;req'] as const;

/**
 * A `nonce` the client put in Accept-Signature (`svc=();nonce="…"`), echoed in the signature so
 * the client knows the answer is fresh. Only a plain token is taken (an sf-string without quotes or
 * backslashes, 128 characters at most); anything else is ignored.
 */
function requestedNonce(acceptSignature: string | string[] | undefined): string | undefined {
  const text = Array.isArray(acceptSignature) ? acceptSignature.join(',') : acceptSignature;
  return text === undefined ? undefined : /;\s*nonce="([\x21\x23-\x5b\x5d-\x7e]{1,128})"/.exec(text)?.[1];
}

function headerRecord(headers: Record<string, unknown>): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    out[name.toLowerCase()] = Array.isArray(value) ? value.map(String) : String(value);
  }
  return out;
}

/**
 * Signs buffered responses with the ML-DSA identity: `Content-Digest` (sha-256), then
 * `Signature-Input` and `Signature` per RFC 9421, `alg` the ML-DSA parameter set and `keyid` the
 * identity's key id (GET /transport/identity publishes the key).
 *
 * Which: those `always` names (health: the transport's own evidence), and any whose request
 * carries `Accept-Signature` (RFC 9421 §5.1, how a client asks for a signed response). An
 * ML-DSA-65 signature costs about 1 ms of CPU, which on a small endpoint cut throughput eight-fold
 * in bench/transport.ts, so it is spent where someone will check it. Streamed bodies (SSE) cannot
 * be digested before they are sent and go unsigned; route evidence inside them is signed on its own.
 */
export function installResponseSignatures(app: FastifyInstance, identity: Pick<TransportIdentity, 'algorithm' | 'keyId' | 'privateKey'>, always: (path: string) => boolean): void {
  const key = {
    id: identity.keyId,
    alg: identity.algorithm,
    sign: async (data: Buffer): Promise<Buffer> => sign(null, data, identity.privateKey),
  };
  app.addHook('onSend', async (request, reply, payload) => {
    if (typeof payload !== 'string' && !Buffer.isBuffer(payload) && payload !== null && payload !== undefined) return payload;
    // A HEAD answer carries no content for a digest to describe.
    if (request.method === 'HEAD') return payload;
    if (request.headers['accept-signature'] === undefined && !always(request.routeOptions.url ?? '')) return payload;
    const nonce = requestedNonce(request.headers['accept-signature']);
    const body = payload ?? '';
    reply.header('content-digest', `sha-256=:${createHash('sha256').update(body).digest('base64')}:`);
    const fields = reply.hasHeader('content-type') ? [...COVERED, 'content-type'] : [...COVERED];
    const signed = await httpbis.signMessage(
      { key, name: RESPONSE_SIGNATURE_LABEL, fields, params: ['created', 'keyid', 'alg', ...(nonce === undefined ? [] : ['nonce'])], paramValues: nonce === undefined ? {} : { nonce } },
      { status: reply.statusCode, headers: headerRecord(reply.getHeaders()) },
      // Path and query are covered, not the host: which name a client used is its own business.
      // Parsed as a URL reference, so an absolute-form target (`GET http://h/p`) gives `/p`.
      { method: request.method, url: new URL(request.url, 'http://localhost'), headers: headerRecord(request.headers) },
    );
    // The library names the two fields in its own case.
    for (const [name, value] of Object.entries(signed.headers)) {
      const lower = name.toLowerCase();
      if (lower === 'signature' || lower === 'signature-input') reply.header(lower, value);
    }
    return payload;
  });
}
