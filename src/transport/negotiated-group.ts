import type { Socket } from 'node:net';
import type { Server as TlsServer, TLSSocket } from 'node:tls';
import { getExtensionData, NonTlsError, readTlsClientHello } from 'read-tls-client-hello';
import { ApiError } from '../shared/api-error.ts';
import { endAndClose, rawErrorResponse, type ErrorEnvelope } from '../http/client-error-handler.ts';

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
  /** The key-exchange group of a connection that completed its handshake on this server. */
  groupOf(socket: TLSSocket): string | undefined;
}

/** A connection between its first byte and the end of its handshake. */
interface Pending {
  socket: Socket;
  group?: string | undefined;
}

/** Unique among the live connections of one listening socket (its local address and port are fixed). */
function connectionKey(socket: { remoteAddress?: string | undefined; remotePort?: number | undefined }): string {
  return `${socket.remoteAddress ?? ''}|${socket.remotePort ?? ''}`;
}

/**
 * Node reports a connection's key-exchange group only on the client side
 * (`getEphemeralKeyInfo()` is null on a server socket). To report the group each client really
 * negotiated, the server reads the ClientHello off the raw socket before TLS starts (the bytes
 * are put back for OpenSSL), and works out OpenSSL's choice from it (`pickGroup`).
 *
 * A client that never sends its hello is cut off after `helloTimeoutMs`; one that speaks plain
 * HTTP to the HTTPS port gets a plain-HTTP 400 saying so, in the error envelope. A hello the
 * reader cannot parse (split over several records, say) goes to TLS as it is, its group unknown.
 *
 * Node's HTTP layer sees a connection only once its handshake is done, so `closeIdleConnections`
 * and `closeAllConnections` are extended here to the connections still before that point: a
 * shutdown must not wait on a client stalled mid-handshake.
 */
export function trackNegotiatedGroups(server: TlsServer, options: { groups: readonly string[]; helloTimeoutMs: number; envelope: ErrorEnvelope }): GroupTracking {
  const [tlsConnectionListener] = server.listeners('connection') as ((socket: Socket) => void)[];
  if (tlsConnectionListener === undefined) throw new Error('the TLS server has no connection listener');
  server.removeListener('connection', tlsConnectionListener);
  const pending = new Map<string, Pending>();
  const groups = new WeakMap<TLSSocket, string>();

  server.on('connection', (socket: Socket) => {
    const key = connectionKey(socket);
    const entry: Pending = { socket };
    pending.set(key, entry);
    socket.once('close', () => {
      if (pending.get(key) === entry) pending.delete(key);
    });
    // A reset before the hello is complete must not be an uncaught error.
    const ignore = (): void => {};
    socket.on('error', ignore);
    const timer = setTimeout(() => socket.destroy(), options.helloTimeoutMs);
    timer.unref();
    const startTls = (): void => {
      socket.off('error', ignore);
      if (!socket.destroyed) tlsConnectionListener.call(server, socket);
    };
    readTlsClientHello(socket).then(
      (hello) => {
        clearTimeout(timer);
        const shares = getExtensionData(hello, 0x0033) as { entries?: { group: number }[] } | null | undefined;
        const supported = getExtensionData(hello, 0x000a) as { groups?: number[] } | null | undefined;
        entry.group = pickGroup(options.groups, { keyShares: shares?.entries?.map((e) => e.group) ?? [], supported: supported?.groups ?? [] });
        startTls();
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
          socket.off('error', ignore);
          socket.on('error', () => socket.destroy());
          // Read and drop what the client still sends, so its close is seen and ours is prompt.
          socket.resume();
          endAndClose(socket, rawErrorResponse(refusal, options.envelope), true);
          return;
        }
        // Not a hello this reader understands (the bytes are back on the socket): OpenSSL decides.
        startTls();
      },
    );
  });
  server.prependListener('secureConnection', (tlsSocket: TLSSocket) => {
    const key = connectionKey(tlsSocket);
    const entry = pending.get(key);
    pending.delete(key);
    if (entry?.group !== undefined) groups.set(tlsSocket, entry.group);
  });

  // Connections before the end of their handshake are idle by any measure: no request yet.
  const cutPending = (): void => {
    for (const { socket } of pending.values()) socket.destroy();
    pending.clear();
  };
  const { closeIdleConnections, closeAllConnections } = server as TlsServer & { closeIdleConnections?: () => void; closeAllConnections?: () => void };
  Object.assign(server, {
    closeIdleConnections(this: unknown): void {
      cutPending();
      closeIdleConnections?.call(server);
    },
    closeAllConnections(this: unknown): void {
      cutPending();
      closeAllConnections?.call(server);
    },
  });
  return { groupOf: (socket) => groups.get(socket) };
}
