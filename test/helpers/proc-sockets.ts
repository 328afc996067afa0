/**
 * Watches, from outside, every IP socket a process holds: its open file descriptors
 * (`/proc/PID/fd`, `socket:[inode]`) joined with its network namespace's socket tables
 * (`/proc/PID/net/{tcp,tcp6,udp,udp6,raw,raw6}`) on a short interval. It sees sockets that hooks
 * in the process do not: those of worker threads, of native code (llama.cpp), and the resolver's
 * UDP sockets (getaddrinfo and c-ares run in-process). It is a sampler, not a trace: a socket that
 * opens and closes between two polls (a refused connect or a one-datagram send lasts well under a
 * millisecond) is never seen. test/transport/offline-daemon.test.ts covers those with the network
 * namespace's own counters (/proc/PID/net/snmp). Linux only (`available()`).
 */
import { existsSync } from 'node:fs';
import { readdir, readFile, readlink } from 'node:fs/promises';

export type SocketTable = 'tcp' | 'tcp6' | 'udp' | 'udp6' | 'raw' | 'raw6';

export interface SeenSocket {
  table: SocketTable;
  inode: string;
  /** `127.0.0.1:11435`, `[::1]:443`. */
  local: string;
  remote: string;
  localIp: string;
  remoteIp: string;
  /** TCP state name (`LISTEN`, `ESTABLISHED`, …); the raw hex code for UDP and raw sockets. */
  state: string;
}

const TABLES: readonly SocketTable[] = ['tcp', 'tcp6', 'udp', 'udp6', 'raw', 'raw6'];

const TCP_STATES = new Map([
  ['01', 'ESTABLISHED'], ['02', 'SYN_SENT'], ['03', 'SYN_RECV'], ['04', 'FIN_WAIT1'], ['05', 'FIN_WAIT2'], ['06', 'TIME_WAIT'],
  ['07', 'CLOSE'], ['08', 'CLOSE_WAIT'], ['09', 'LAST_ACK'], ['0A', 'LISTEN'], ['0B', 'CLOSING'], ['0C', 'NEW_SYN_RECV'],
]);

/** The kernel prints each 32-bit word of an address in host byte order (little-endian here). */
function word(hex: string): number[] {
  return [6, 4, 2, 0].map((i) => Number.parseInt(hex.slice(i, i + 2), 16));
}

/** `0100007F:1F90` → [`127.0.0.1`, 8080]; 32 hex digits for IPv6. */
export function decodeAddress(field: string): [string, number] {
  const [hex = '', portHex = '0'] = field.split(':');
  const port = Number.parseInt(portHex, 16);
  if (hex.length === 8) return [word(hex).join('.'), port];
  const bytes = [0, 8, 16, 24].flatMap((i) => word(hex.slice(i, i + 8)));
  const groups = Array.from({ length: 8 }, (_, i) => ((bytes[2 * i]! << 8) | bytes[2 * i + 1]!).toString(16));
  // Mapped IPv4 (::ffff:a.b.c.d) reads better as such.
  if (groups.slice(0, 5).every((g) => g === '0') && groups[5] === 'ffff') return [`::ffff:${bytes.slice(12).join('.')}`, port];
  const text = groups.join(':').replace(/(^|:)0(:0)+(:|$)/, '::').replace(/:{3,}/, '::');
  return [text, port];
}

export function isLoopback(ip: string): boolean {
  return ip.startsWith('127.') || ip.startsWith('::ffff:127.') || ip === '::1';
}

function show(ip: string, port: number): string {
  return ip.includes(':') ? `[${ip}]:${port}` : `${ip}:${port}`;
}

/** Parses one socket table, keeping only rows whose inode is in `inodes`. */
export function parseTable(table: SocketTable, text: string, inodes: ReadonlySet<string>): SeenSocket[] {
  const out: SeenSocket[] = [];
  for (const line of text.split('\n').slice(1)) {
    const f = line.trim().split(/\s+/);
    const inode = f[9];
    if (inode === undefined || !inodes.has(inode)) continue;
    const [localIp, localPort] = decodeAddress(f[1]!);
    const [remoteIp, remotePort] = decodeAddress(f[2]!);
    const state = f[3]!;
    out.push({
      table, inode, localIp, remoteIp,
      local: show(localIp, localPort),
      remote: show(remoteIp, remotePort),
      state: table.startsWith('tcp') ? (TCP_STATES.get(state) ?? state) : state,
    });
  }
  return out;
}

export class ProcSocketWatch {
  /** Every distinct (inode, table, state, remote) seen, first sighting kept. */
  readonly seen = new Map<string, SeenSocket>();
  polls = 0;
  readonly #pid: number;
  readonly #intervalMs: number;
  #running: Promise<void> | undefined;
  #stopped = false;

  constructor(pid: number, intervalMs = 15) {
    this.#pid = pid;
    this.#intervalMs = intervalMs;
  }

  static available(): boolean {
    return existsSync('/proc/self/net/tcp') && existsSync('/proc/self/fd');
  }

  /** One look: the process's socket inodes, then the tables of its namespace. */
  async poll(): Promise<SeenSocket[]> {
    const inodes = new Set<string>();
    let fds: string[];
    try {
      fds = await readdir(`/proc/${this.#pid}/fd`);
    } catch {
      return []; // the process is gone
    }
    await Promise.all(fds.map(async (fd) => {
      try {
        const target = await readlink(`/proc/${this.#pid}/fd/${fd}`);
        const match = /^socket:\[(\d+)\]$/.exec(target);
        if (match) inodes.add(match[1]!);
      } catch {
        // closed between readdir and readlink
      }
    }));
    if (inodes.size === 0) return [];
    const found: SeenSocket[] = [];
    for (const table of TABLES) {
      let text: string;
      try {
        text = await readFile(`/proc/${this.#pid}/net/${table}`, 'utf8');
      } catch {
        continue; // no IPv6 or no raw table in this kernel
      }
      found.push(...parseTable(table, text, inodes));
    }
    this.polls++;
    for (const s of found) {
      const key = `${s.table} ${s.inode} ${s.state} ${s.remote}`;
      if (!this.seen.has(key)) this.seen.set(key, s);
    }
    return found;
  }

  start(): void {
    this.#running ??= (async () => {
      while (!this.#stopped) {
        await this.poll();
        await new Promise((r) => setTimeout(r, this.#intervalMs));
      }
    })();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    await this.#running;
  }

  /** Sockets seen that are not purely loopback: a remote or (for listeners) a local address off loopback, or any UDP/raw socket. */
  offLoopback(): SeenSocket[] {
    return [...this.seen.values()].filter((s) => {
      if (!s.table.startsWith('tcp')) return true;
      if (s.state === 'LISTEN') return !isLoopback(s.localIp);
      return !isLoopback(s.remoteIp) || !isLoopback(s.localIp);
    });
  }
}
