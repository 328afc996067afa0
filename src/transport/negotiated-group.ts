import type { Socket } from 'node:net';
import type { Server as TlsServer, TLSSocket } from 'node:tls';
import { getExtensionData, NonTlsError, readTlsClientHello } from 'read-tls-client-hello';
import { ApiError } from '../shared/api-error.ts';
import { endAndClose, rawErrorResponse, type ErrorEnvelope } from '../runtime/client-error-handler.ts';

/** IANA TLS Supported Groups codepoints of the groups OpenSSL 3.5 names (draft-ietf-tls-ecdhe-mlkem, draft-connolly-tls-mlkem-key-agreement). */
const GROUP_CODEPOINTS = new Map<string, number>([
  ['MLKEM512', 0x0200],
  ['MLKEM768', 0x0201],
  ['MLKEM1024', 0x0202],
  ['SecP256r1MLKEM768', 0x11eb],
  ['X25519MLKEM768', 0x11ec],
  ['SecP384r1MLKEM1024', 0x11ed],
]);

/** What a ClientHello offers: groups it sent a key share for, and every group it supports. */
export interface OfferedGroups {
  keyShares: readonly number[];
  supported: readonly number[];
}

/**
 * The group an OpenSSL 3.5 TLS 1.3 server picks from `allowed` (its list, most preferred first,
 * one tuple): among the groups the client sent a key share for, the server's favourite; if none,
 * its favourite among the client's supported groups (after a HelloRetryRequest). Undefined: no
 * group in common, so the handshake fails. Tests pin this against the client's own view of the
 * same connection (`getEphemeralKeyInfo()`), for every mix of offers.
 */
export function pickGroup(allowed: readonly string[], offered: OfferedGroups): string | undefined {
  const byShare = allowed.find((g) => offered.keyShares.includes(GROUP_CODEPOINTS.get(g) ?? -1));
  return byShare ?? allowed.find((g) => offered.supported.includes(GROUP_CODEPOINTS.get(g) ?? -1));
}

export interface GroupTracking {
  /** The key-exchange group of a connection that completed its handshake. */
  groupOf(socket: TLSSocket): string | undefined;
}

/**
 * Node reports a connection's key-exchange group only on the client side
 * (`getEphemeralKeyInfo()` is null on a server socket). To report the group each client really
 * negotiated, the server reads the ClientHello off the raw socket before TLS starts (the bytes
 * are put back for OpenSSL), and works out OpenSSL's choice from it (`pickGroup`).
 *
 * A client that never sends its hello is cut off after `helloTimeoutMs`; one that speaks plain
 * HTTP to the HTTPS port gets a plain-HTTP 400 saying so, in the error envelope.
 */
export function trackNegotiatedGroups(server: TlsServer, options: { groups: readonly string[]; helloTimeoutMs: number; envelope: ErrorEnvelope }): GroupTracking {
  const [tlsConnectionListener] = server.listeners('connection') as ((socket: Socket) => void)[];
  if (tlsConnectionListener === undefined) throw new Error('the TLS server has no connection listener');
  server.removeListener('connection', tlsConnectionListener);
  // Keyed by the peer's address and port: unique among live connections, and the TLS socket
  // reports the same pair as the raw socket it wraps.
  const groups = new Map<string, string>();
  const keyOf = (socket: { remoteAddress?: string | undefined; remotePort?: number | undefined }): string => `${socket.remoteAddress ?? ''}|${socket.remotePort ?? ''}`;
  server.on('connection', (socket: Socket) => {
    const key = keyOf(socket);
    socket.once('close', () => groups.delete(key));
    // A reset before the hello is complete must not be an uncaught error.
    const ignore = (): void => {};
    socket.on('error', ignore);
    const timer = setTimeout(() => socket.destroy(), options.helloTimeoutMs);
    timer.unref();
    readTlsClientHello(socket).then(
      (hello) => {
        clearTimeout(timer);
        socket.off('error', ignore);
        const shares = getExtensionData(hello, 0x0033) as { entries?: { group: number }[] } | null | undefined;
        const supported = getExtensionData(hello, 0x000a) as { groups?: number[] } | null | undefined;
        const group = pickGroup(options.groups, { keyShares: shares?.entries?.map((e) => e.group) ?? [], supported: supported?.groups ?? [] });
        if (group !== undefined) groups.set(key, group);
        if (!socket.destroyed) tlsConnectionListener.call(server, socket);
      },
      (error: unknown) => {
        clearTimeout(timer);
        if (socket.destroyed) return;
        if (error instanceof NonTlsError && socket.writable) {
          const refusal = new ApiError({
            status: 400,
            type: 'invalid_request_error',
            code: 'https_required',
            message: 'This port serves HTTPS only (the daemon runs with --pqc-transport): use an https:// URL.',
          });
          endAndClose(socket, rawErrorResponse(refusal, options.envelope), true);
          return;
        }
        socket.destroy();
      },
    );
  });
  return { groupOf: (socket) => groups.get(keyOf(socket)) };
}
