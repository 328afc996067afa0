/**
 * Hosts of their own for multi-node tests: a network namespace per node, joined to this one by
 * a veth pair on a /30 of 10.77.0.0/16, so a process started in it (`ip netns exec`) has its own
 * loopback, its own ports and its own address, and reaches this host only over the link. Needs
 * root and iproute2; `namespacesUnavailable` says why not in one line where they are missing.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import type { TestContext } from 'node:test';

export interface NodeHost {
  /** The namespace's name, for `ip netns exec`. */
  name: string;
  /** This host's address on the link (the namespace reaches us there). */
  hostAddress: string;
  /** The namespace's own address (we reach it there). */
  address: string;
  /** The command prefix that runs a program inside it. */
  wrap: readonly string[];
}

const ip = (...args: string[]) => execFileSync('ip', args, { stdio: ['ignore', 'ignore', 'pipe'] });

/** False when namespaces can be made here; otherwise the one-line reason a test skips with. */
export function namespacesUnavailable(what: string): string | false {
  if (process.platform !== 'linux') return `${what} needs Linux network namespaces; skipped`;
  if (process.getuid?.() !== 0) return `${what} needs root for ip netns; skipped (run as root, or in CI's container)`;
  const probe = `svc-probe-${randomBytes(3).toString('hex')}`;
  try {
    ip('netns', 'add', probe);
    ip('netns', 'del', probe);
    return false;
  } catch (error) {
    return `${what} needs ip netns, which failed here (${String((error as Error).message).split('\n')[0]}); skipped`;
  }
}

let next = Math.floor(Math.random() * 16_000);

/** A namespace joined to this host; removed (with its link) when the test ends. */
export function nodeHost(t: TestContext): NodeHost {
  const n = next++ % 16_384;
  const id = randomBytes(3).toString('hex');
  const name = `svc-node-${id}`;
  // A /30 per host: .1 here, .2 there.
  const base = n * 4;
  const prefix = `10.77.${Math.floor(base / 256)}`;
  const hostAddress = `${prefix}.${(base % 256) + 1}`;
  const address = `${prefix}.${(base % 256) + 2}`;
  const outer = `vh${id}`;
  const inner = `vn${id}`;
  ip('netns', 'add', name);
  t.after(() => {
    try { ip('netns', 'del', name); } catch { /* gone already */ }
    try { ip('link', 'del', outer); } catch { /* went with the namespace */ }
  });
  ip('link', 'add', outer, 'type', 'veth', 'peer', 'name', inner);
  ip('link', 'set', inner, 'netns', name);
  ip('addr', 'add', `${hostAddress}/30`, 'dev', outer);
  ip('link', 'set', outer, 'up');
  ip('netns', 'exec', name, 'ip', 'addr', 'add', `${address}/30`, 'dev', inner);
  ip('netns', 'exec', name, 'ip', 'link', 'set', inner, 'up');
  ip('netns', 'exec', name, 'ip', 'link', 'set', 'lo', 'up');
  return { name, hostAddress, address, wrap: ['ip', 'netns', 'exec', name] };
}
