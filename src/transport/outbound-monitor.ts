import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import type { Socket as UdpSocket } from 'node:dgram';
import { BlockList, isIP, type Socket } from 'node:net';

/**
 * Counts every client socket this process opens, whoever opens it (svc's own code, a library,
 * Node's fetch), by listening on Node's diagnostics channels rather than wrapping our own call
 * sites: `net.client.socket` is published for every TCP and pipe client socket (net, tls,
 * http/https, undici and so fetch — checked on Node 24.21) and `udp.socket` for every dgram
 * socket. `/health` shows the counts, so "no outbound connection" is something a user can read
 * off a running daemon, not only a promise.
 *
 * Where a socket goes is known only when it connects, so TCP sockets are classified on each
 * `connectionAttempt` (the resolved IP, or the path of a pipe): a non-loopback IP is outbound,
 * a loopback IP or a pipe stays on this machine (`local`). The MCP tools call the daemon over
 * its own loopback listener; those connections are `local`, not outbound. A UDP socket can send
 * anywhere without connecting, so every one counts as outbound from its creation (svc opens none).
 *
 * Not seen here: name lookups (`dns.lookup` runs getaddrinfo in libc, `dns.resolve` c-ares;
 * neither publishes on a channel), and sockets opened by worker threads (each thread has its own
 * channels) or native code. svc's workers and llama.cpp open none; the outbound test watches the
 * whole process from outside through /proc to prove it.
 */

export interface SocketCount {
  /** Open now. */
  open: number;
  /** Opened since the monitor started. */
  total: number;
}

export interface OutboundCounts {
  /** Sockets to addresses off this machine (and UDP sockets, which can send anywhere). */
  outbound: SocketCount;
  /** Sockets that stay on this machine: loopback IPs and pipes, the daemon's calls to itself included. */
  local: SocketCount;
}

type Where = 'outbound' | 'local';

const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');

/** 127.0.0.0/8, ::1 and their IPv4-mapped forms. */
export function isLoopbackIp(address: string): boolean {
  const family = isIP(address);
  return family !== 0 && LOOPBACK.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

export class OutboundMonitor {
  readonly #counts: OutboundCounts = { outbound: { open: 0, total: 0 }, local: { open: 0, total: 0 } };
  /** Each tracked socket's reclassifier, for `countAsOutbound`. */
  readonly #tracked = new WeakMap<object, (where: Where) => void>();
  #started = false;

  /** Subscribes; call it before anything opens a socket. Idempotent. */
  start(): void {
    if (this.#started) return;
    this.#started = true;
    subscribe('net.client.socket', this.#onTcp);
    subscribe('udp.socket', this.#onUdp);
  }

  /** Unsubscribes; sockets already seen still close out of the counts. */
  stop(): void {
    if (!this.#started) return;
    this.#started = false;
    unsubscribe('net.client.socket', this.#onTcp);
    unsubscribe('udp.socket', this.#onUdp);
  }

  /** A copy of the counts now. */
  counts(): OutboundCounts {
    return { outbound: { ...this.#counts.outbound }, local: { ...this.#counts.local } };
  }

  /**
   * The `/health` fields: `outbound_connections` (open now, a number as before),
   * `outbound_connections_total` (since start), `local_connections` (loopback and pipes).
   */
  health(): { outbound_connections: number; outbound_connections_total: number; local_connections: SocketCount } {
    const { outbound, local } = this.counts();
    return { outbound_connections: outbound.open, outbound_connections_total: outbound.total, local_connections: local };
  }

  /**
   * Counts a socket as outbound whatever its address: an upstream the user declared
   * `kind = "remote"` but reaches through a tunnel or proxy on loopback still carries requests
   * off the machine. Sockets this monitor did not see are ignored.
   */
  countAsOutbound(socket: object): void {
    this.#tracked.get(socket)?.('outbound');
  }

  /** Tracks one socket: counted once classified, moved if a later attempt goes elsewhere, uncounted on close. */
  #track(emitter: Socket | UdpSocket, initial: Where | undefined): (where: Where) => void {
    let current = initial;
    let closed = false;
    if (current !== undefined) {
      this.#counts[current].open++;
      this.#counts[current].total++;
    }
    emitter.once('close', () => {
      closed = true;
      if (current !== undefined) this.#counts[current].open--;
    });
    const reclassify = (where: Where): void => {
      // Once outbound, a socket stays outbound: it has already tried to leave the machine.
      if (closed || current === where || current === 'outbound') return;
      if (current !== undefined) this.#counts[current].open--;
      current = where;
      this.#counts[where].open++;
      this.#counts[where].total++;
    };
    this.#tracked.set(emitter, reclassify);
    return reclassify;
  }

  // Arrow properties: subscribe/unsubscribe need the same function object.
  readonly #onTcp = (message: unknown): void => {
    const socket = (message as { socket?: Socket }).socket;
    if (socket === undefined) return;
    const seen = this.#track(socket, undefined);
    // Emitted for each address tried (happy eyeballs tries several), with the path for a pipe.
    // A pipe (no IP) stays on this machine.
    socket.on('connectionAttempt', (address: string) => seen(isIP(address) !== 0 && !isLoopbackIp(address) ? 'outbound' : 'local'));
  };

  readonly #onUdp = (message: unknown): void => {
    const socket = (message as { socket?: UdpSocket }).socket;
    // Outbound from its creation: it can send to any address without connecting first.
    if (socket !== undefined) this.#track(socket, 'outbound');
  };
}
