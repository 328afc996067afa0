import { createHash, randomBytes } from 'node:crypto';
import { ConfigError } from '../../shared/config-values.ts';

/**
 * Node tokens: the secret an inference node (`svc serve --join`) presents to the gateway. The
 * gateway is given only each token's SHA-256 with the node's name (`--node-token-hash
 * NAME:sha256:HEX`), never the token: a copy of the gateway's settings, environment or logs lets
 * nobody join. SHA-256 without a salt is enough here because a token is 256 random bits, not a
 * password anyone could guess; a slow hash would only slow every heartbeat.
 *
 * The node's id (in route evidence, fallback reasons and logs) is the name the operator gave its
 * token, so a leaked token can impersonate that one node and nothing else.
 */
export const NODE_TOKEN_PREFIX = 'svc_nt_';

const NAME = /^[a-z0-9][a-z0-9_.-]{0,63}$/;
const HASH_ENTRY = /^([^:]+):sha256:([0-9a-f]{64})$/;

export interface NodeTokenEntry {
  name: string;
  /** Lower-case hex SHA-256 of the token. */
  sha256: string;
}

export function hashNodeToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** A new token for the node `name` and the line the gateway is given (`NAME:sha256:HEX`). */
export function createNodeToken(name: string): { token: string; entry: string } {
  if (!NAME.test(name)) throw new ConfigError(`--name '${name}': a node name is 1 to 64 lower-case letters, digits, dots, dashes or underscores.`);
  const token = `${NODE_TOKEN_PREFIX}${randomBytes(32).toString('base64url')}`;
  return { token, entry: `${name}:sha256:${hashNodeToken(token)}` };
}

/** `NAME:sha256:HEX` entries (repeatable flag or comma list) → the gateway's token table; ConfigError on a bad one. */
export function parseNodeTokenHashes(values: readonly string[] | undefined): NodeTokenEntry[] {
  const entries: NodeTokenEntry[] = [];
  const names = new Set<string>();
  const hashes = new Set<string>();
  for (const raw of (values ?? []).flatMap((v) => v.split(',')).map((v) => v.trim()).filter((v) => v !== '')) {
    const match = HASH_ENTRY.exec(raw.toLowerCase());
    const name = match?.[1];
    // Never echo the value: it is a hash, not the secret, but a mistyped secret may be pasted here.
    if (match === null || name === undefined || !NAME.test(name)) {
      throw new ConfigError('--node-token-hash: each entry is NAME:sha256:HEX as `svc hosted node-token create` prints it (NAME: lower-case letters, digits, . _ -; HEX: 64 hex digits).');
    }
    if (names.has(name)) throw new ConfigError(`--node-token-hash: the node name '${name}' is given twice.`);
    if (hashes.has(match[2]!)) throw new ConfigError(`--node-token-hash: two names ('${name}' and another) share one token.`);
    names.add(name);
    hashes.add(match[2]!);
    entries.push({ name, sha256: match[2]! });
  }
  return entries;
}

/** The gateway's view: which node, if any, a presented token belongs to. */
export class NodeTokens {
  readonly #byHash: Map<string, string>;

  constructor(entries: readonly NodeTokenEntry[]) {
    this.#byHash = new Map(entries.map((e) => [e.sha256, e.name]));
  }

  get size(): number {
    return this.#byHash.size;
  }

  /**
   * The node's name for `token`, or undefined. The Map is keyed by the token's hash, so what a
   * lookup's timing could reveal is about a hash, which says nothing useful about any token.
   */
  nodeFor(token: string): string | undefined {
    if (!token.startsWith(NODE_TOKEN_PREFIX) || token.length > 256) return undefined;
    return this.#byHash.get(hashNodeToken(token));
  }
}
