import type { Socket } from 'node:net';
import { TLSSocket, type Server as TlsServer, type TlsOptions } from 'node:tls';
import type { FastifyInstance } from 'fastify';
import type { ErrorEnvelope } from '../http/client-error-handler.ts';
import { signEvidence, type EvidenceSignatureFields } from './evidence-signature.ts';
import { trackNegotiatedGroups, type GroupTracking } from './negotiated-group.ts';
import type { PqcTransport } from './pqc-transport-options.ts';
import { installResponseSignatures } from './response-signatures.ts';
import { loadTransportIdentity, TransportIdentityError, type TransportIdentity } from './transport-identity.ts';

/** How long a connection may take to send its ClientHello, and then to finish its handshake, before it is cut off. */
const HELLO_TIMEOUT_MS = 10_000;

/** ML-KEM groups in TLS came with OpenSSL 3.5 (Node 24's). */
function requireOpenSsl35(): void {
  const [major = 0, minor = 0] = (process.versions.openssl ?? '').split('.').map(Number);
  if (major < 3 || (major === 3 && minor < 5)) {
    throw new TransportIdentityError(`--pqc-transport needs OpenSSL 3.5 or later for ML-KEM in TLS; this Node (${process.version}) has OpenSSL ${process.versions.openssl ?? 'unknown'}. Run svc on Node 24 (npm start does).`);
  }
}

/** Addresses that mean "every interface": not names a client can reach, so not in the certificate. */
const WILDCARD_HOSTS = new Set(['0.0.0.0', '::', '']);

/** `/health`'s transport fields for one connection, read from that connection. */
export interface TransportHealth {
  pqc_transport: string[];
  /** The connection's protocol (`TLSv1.3`), null over plain HTTP (or once the client has gone). */
  tls: string | null;
  /** The connection's cipher suite, key-exchange group and certificate key, null over plain HTTP. */
  cipher: { suite: string; group: string | null; certificate: string } | null;
  /** The identity that signs responses and evidence (ML-DSA only), and where its public key is. */
  transport_identity?: { algorithm: string; key_id: string; url: string };
}

/** Routes whose answers are signed even unasked: the health documents, which carry the transport's evidence. */
const SIGNED_ALWAYS = new Set(['/health', '/api/v1/health', '/v1/health']);

/** Where the identity's public key and certificate are published. */
export const IDENTITY_PATH = '/transport/identity';

/**
 * `--pqc-transport` at run time: the HTTPS settings every listener uses (TLS 1.3 only, post-quantum
 * groups only, the identity's certificate), what health reports per connection, and, with an
 * ML-DSA identity, signatures on responses and route evidence.
 */
export class TransportSecurity {
  readonly pqc: PqcTransport;
  readonly identity: TransportIdentity;
  readonly #tracking: GroupTracking[] = [];

  constructor(pqc: PqcTransport, options: { dataDir: string; hosts: readonly string[] }) {
    requireOpenSsl35();
    this.pqc = pqc;
    // The loopback names always, so https://localhost, https://127.0.0.1 and https://[::1] all verify.
    const names = [...new Set(['localhost', '127.0.0.1', '::1', ...options.hosts.filter((h) => !WILDCARD_HOSTS.has(h))])];
    this.identity = loadTransportIdentity({ dataDir: options.dataDir, algorithm: pqc.signature, names });
  }

  /** Whether responses and evidence are signed (an ML-DSA identity). */
  get signs(): boolean {
    return this.identity.algorithm !== 'ecdsa-p256';
  }

  /** Options for `https.createServer`: nothing below TLS 1.3, no classical key exchange. */
  tlsOptions(): TlsOptions {
    return {
      key: this.identity.privateKey.export({ format: 'pem', type: 'pkcs8' }),
      cert: this.identity.certificatePem,
      minVersion: 'TLSv1.3',
      ecdhCurve: this.pqc.groups.join(':'),
      // Node's default is 120 s: a client stalled mid-handshake would hold a slot that long.
      handshakeTimeout: HELLO_TIMEOUT_MS,
    };
  }

  /** Called on each HTTPS server before it listens: reads each connection's ClientHello for its group. */
  track(server: TlsServer, envelope: ErrorEnvelope): void {
    this.#tracking.push(trackNegotiatedGroups(server, { groups: this.pqc.groups, helloTimeoutMs: HELLO_TIMEOUT_MS, envelope }));
  }

  /** The health fields for the connection a request came on. */
  health(socket: Socket): TransportHealth {
    const identity = this.signs ? { transport_identity: { algorithm: this.identity.algorithm, key_id: this.identity.keyId, url: IDENTITY_PATH } } : {};
    if (!(socket instanceof TLSSocket)) return { pqc_transport: [], tls: null, cipher: null, ...identity };
    const group = this.#tracking.map((t) => t.groupOf(socket)).find((g) => g !== undefined) ?? null;
    // Both read null once the client has gone (the answer then reaches no one, but must not throw).
    const suite = (socket.getCipher() as ReturnType<TLSSocket['getCipher']> | null)?.standardName ?? null;
    return {
      pqc_transport: this.pqc.names,
      tls: socket.getProtocol(),
      cipher: suite === null ? null : { suite, group, certificate: this.identity.algorithm },
      ...identity,
    };
  }

  /** The start-up log line: what the listeners speak, the certificate, and (`signed`) what an ML-DSA identity signs. */
  startupLine(signed: string): { fields: Record<string, unknown>; message: string } {
    const { identity, pqc } = this;
    return {
      fields: { pqc_transport: pqc.names, groups: pqc.groups, certificate: identity.certificatePath, key_id: identity.keyId },
      message: `HTTPS only, TLS 1.3 with ${pqc.groups.join(' or ')} key exchange; ${identity.algorithm} certificate ${identity.certificatePath}${this.signs ? `; ${signed} signed (public key at ${IDENTITY_PATH})` : ''}`,
    };
  }

  /** Signs a `svc_route` record when the identity is ML-DSA; otherwise returns it as it is. */
  signEvidence<T extends object>(record: T): T | (T & EvidenceSignatureFields) {
    return this.signs ? signEvidence(record, this.identity) : record;
  }

  /** Response signatures (ML-DSA identity only) and `GET /transport/identity` on an app. */
  install(app: FastifyInstance): void {
    if (this.signs) installResponseSignatures(app, this.identity, (path) => SIGNED_ALWAYS.has(path));
    app.get(IDENTITY_PATH, async (_request, reply) => {
      reply.header('cache-control', 'no-cache');
      return {
        algorithm: this.identity.algorithm,
        key_id: this.identity.keyId,
        public_key: this.identity.publicKeyPem,
        certificate: this.identity.certificatePem,
        signs: this.signs ? ['responses', 'svc_route'] : [],
        pqc_transport: this.pqc.names,
      };
    });
  }
}

/** Health fields when the transport is plain HTTP (no --pqc-transport). */
export function plainTransportHealth(): TransportHealth {
  return { pqc_transport: [], tls: null, cipher: null };
}
