import { z } from 'zod';
import type { UpstreamSpec } from './upstream-registry.ts';
import { Secret } from '../shared/secret.ts';
import { isLoopbackHostname } from '../shared/loopback-hostname.ts';
import { parseDuration } from '../shared/config-values.ts';

/**
 * Upstream configuration: `[[upstreams]]` tables in the config file, and `--upstream
 * NAME=URL` (env `SVC_UPSTREAM`) for the quick case. Both become the same table, checked
 * with one strict schema (an unknown key is refused, naming it), then resolved: the key read
 * from the environment variable the table names, the kind from the host, defaults filled in.
 */
export const DEFAULT_CONNECT_TIMEOUT = '10s';
/**
 * The first token can be slow to come: Ollama loads a model on first use, and a long prompt
 * is processed before anything streams. Two minutes covers both on ordinary hardware.
 */
export const DEFAULT_FIRST_BYTE_TIMEOUT = '120s';

/** Names appear in model ids (`<name>/<model>`): no slash, nothing a URL or shell would mangle. */
const nameSchema = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/, 'upstream names are 1 to 64 letters, digits, dots, dashes or underscores (no slash), starting with a letter or digit');

/** A duration as the file writes it: `"30s"`, `"2m"`, or a number of seconds. */
const durationSchema = z.union([z.string(), z.number().nonnegative()]);

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** Headers svc sets itself; configuring them would break the exchange or smuggle a key into the file. */
const RESERVED_HEADERS = new Set(['authorization', 'content-type', 'content-length', 'host', 'transfer-encoding', 'connection', 'accept']);

export const upstreamTableSchema = z.strictObject({
  name: nameSchema,
  base_url: z.string().min(1),
  /** The environment variable holding the key (never the key itself: a file is easily shared). */
  api_key_env: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'api_key_env names an environment variable, e.g. OPENAI_API_KEY').optional(),
  models: z.array(z.string().min(1).max(512)).optional(),
  discover: z.boolean().optional(),
  kind: z.enum(['local', 'remote']).optional(),
  timeouts: z.strictObject({ connect: durationSchema.optional(), first_byte: durationSchema.optional() }).optional(),
  headers: z.record(z.string(), z.string()).superRefine((headers, ctx) => {
    for (const [name, value] of Object.entries(headers)) {
      if (!HEADER_NAME.test(name)) ctx.addIssue({ code: 'custom', path: [name], message: 'header names are HTTP tokens' });
      else if (RESERVED_HEADERS.has(name.toLowerCase())) ctx.addIssue({ code: 'custom', path: [name], message: 'svc sets this header itself (a key goes in an environment variable named by api_key_env)' });
      else if (!/^[\t\x20-\x7e\x80-\xff]*$/.test(value)) ctx.addIssue({ code: 'custom', path: [name], message: 'header values are printable text' });
    }
  }).optional(),
});
export type UpstreamTable = z.infer<typeof upstreamTableSchema>;

export class UpstreamConfigError extends Error {
  override name = 'UpstreamConfigError';
}

/** `--upstream ollama=http://127.0.0.1:11434/v1` → a table (discovering its models). */
export function upstreamFromFlag(value: string): UpstreamTable {
  const eq = value.indexOf('=');
  if (eq <= 0) throw new UpstreamConfigError(`--upstream '${value}': write NAME=URL, e.g. ollama=http://127.0.0.1:11434/v1.`);
  const table = { name: value.slice(0, eq).trim(), base_url: value.slice(eq + 1).trim() };
  const parsed = upstreamTableSchema.safeParse(table);
  if (!parsed.success) throw new UpstreamConfigError(`--upstream '${value}': ${parsed.error.issues[0]?.message ?? 'invalid'}.`);
  return parsed.data;
}

/**
 * The base URL an OpenAI client would take. A bare origin gets `/v1` (every OpenAI-compatible
 * server serves there; a user who pastes `http://127.0.0.1:11434` means it). Credentials in
 * the URL are refused: the key belongs in an environment variable, where it is not logged.
 */
export function normalizeBaseUrl(name: string, value: string): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UpstreamConfigError(`upstream '${name}': base_url '${value}' is not a URL (e.g. http://127.0.0.1:11434/v1).`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UpstreamConfigError(`upstream '${name}': base_url must be http:// or https://.`);
  if (url.username !== '' || url.password !== '') throw new UpstreamConfigError(`upstream '${name}': base_url must not carry credentials; put the key in an environment variable named by api_key_env.`);
  if (url.search !== '' || url.hash !== '') throw new UpstreamConfigError(`upstream '${name}': base_url must not have a query or fragment; put a key in api_key_env and other values in headers.`);
  if (url.pathname === '/' || url.pathname === '') url.pathname = '/v1';
  url.pathname = url.pathname.replace(/\/+$/, '');
  return url;
}

/** `local` for loopback hosts (127.0.0.0/8, ::1, localhost), `remote` for anything else. */
export function defaultUpstreamKind(url: URL): 'local' | 'remote' {
  return isLoopbackHostname(url.hostname) ? 'local' : 'remote';
}

/**
 * Tables → specs. Flag upstreams replace file upstreams of the same name (flags take
 * precedence, as for every option); the rest are kept side by side.
 */
export function resolveUpstreams(
  fileTables: readonly UpstreamTable[],
  flagTables: readonly UpstreamTable[],
  env: NodeJS.ProcessEnv,
): UpstreamSpec[] {
  const byName = new Map<string, UpstreamTable>();
  const fileNames = new Set<string>();
  for (const table of fileTables) {
    if (fileNames.has(table.name)) throw new UpstreamConfigError(`Two upstreams are named '${table.name}' in the config file.`);
    fileNames.add(table.name);
    byName.set(table.name, table);
  }
  const flagNames = new Set<string>();
  for (const table of flagTables) {
    if (flagNames.has(table.name)) throw new UpstreamConfigError(`--upstream names '${table.name}' twice.`);
    flagNames.add(table.name);
    byName.set(table.name, table);
  }
  return [...byName.values()].map((table): UpstreamSpec => {
    const url = normalizeBaseUrl(table.name, table.base_url);
    if (table.discover === false && (table.models ?? []).length === 0) {
      throw new UpstreamConfigError(`upstream '${table.name}': discover = false and no models: list its models, or let svc discover them.`);
    }
    const duration = (value: string | number | undefined, fallback: string, what: string): number => {
      const ms = parseDuration(typeof value === 'number' ? `${value}s` : value ?? fallback, `upstream '${table.name}' timeouts.${what}`);
      if (!Number.isFinite(ms) || ms <= 0) throw new UpstreamConfigError(`upstream '${table.name}': timeouts.${what} must be a positive duration.`);
      return ms;
    };
    // An own-property check: a name like `constructor` must not find Object.prototype's.
    const apiKey = table.api_key_env !== undefined && Object.hasOwn(env, table.api_key_env) ? env[table.api_key_env] : undefined;
    return {
      name: table.name,
      baseUrl: url.href.replace(/\/+$/, ''),
      kind: table.kind ?? defaultUpstreamKind(url),
      ...(table.api_key_env !== undefined ? { apiKeyEnv: table.api_key_env } : {}),
      ...(apiKey !== undefined && apiKey !== '' ? { apiKey: new Secret(apiKey) } : {}),
      ...(table.models !== undefined ? { models: table.models } : {}),
      // Without a model list, the upstream's own list is the only one there is.
      discover: table.discover ?? table.models === undefined,
      connectTimeoutMs: duration(table.timeouts?.connect, DEFAULT_CONNECT_TIMEOUT, 'connect'),
      firstByteTimeoutMs: duration(table.timeouts?.first_byte, DEFAULT_FIRST_BYTE_TIMEOUT, 'first_byte'),
      ...(table.headers !== undefined ? { headers: table.headers } : {}),
    };
  });
}
