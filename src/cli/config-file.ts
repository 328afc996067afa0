import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, extname, isAbsolute, join, resolve } from 'node:path';
import type { Command, Option } from 'commander';
import { parse as parseToml, TomlError } from 'smol-toml';
import { z } from 'zod';
import { ConfigError } from '../shared/config-values.ts';
import { upstreamTableSchema, type UpstreamTable } from '../inference/upstream-config.ts';

/**
 * svc's config file: `<data-dir>/config.toml` (or `config.json`), or the file `--config`
 * names. It carries every `svc serve` option under its snake_case name (`--keep-alive` →
 * `keep_alive`), derived from the command's own options so a new flag is a new key at
 * once, plus `[[upstreams]]` tables. Values the file sets are used where neither a flag nor
 * its SVC_* variable is given (flags > env > file > defaults). A key svc does not know is
 * refused, naming it: a typo must not silently leave a setting at its default.
 */
export interface ConfigFile {
  path: string;
  /** Option attribute name (camelCase, as commander names it) → value as a flag would give it. */
  options: Map<string, string | string[] | boolean>;
  upstreams: UpstreamTable[];
}

/** Options that are not settings: the file cannot name another file, and upstreams have their table form. */
const NOT_IN_FILE = new Set(['config', 'help', 'upstream']);
/** Keys whose values are file paths: `~` expands and relative paths are read from the file's folder. */
const PATH_KEYS = new Set(['dataDir', 'model', 'developerKeys', 'draftModel']);

function snakeCase(attribute: string): string {
  return attribute.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}

function expandPath(value: string, base: string): string {
  if (value === '~' || value.startsWith('~/')) return join(homedir(), value.slice(1));
  return isAbsolute(value) ? value : resolve(base, value);
}

/** `--model` takes `PATH` or `ID=PATH`; only the path part is a path. */
function expandModelSpec(value: string, base: string): string {
  const eq = value.indexOf('=');
  if (eq > 0 && !value.slice(0, eq).includes('/')) return `${value.slice(0, eq)}=${expandPath(value.slice(eq + 1), base)}`;
  return expandPath(value, base);
}

interface FileKey {
  attribute: string;
  flag: string;
  schema: z.ZodType;
}

/**
 * The file's keys, one per option of `command`: booleans for switches, a string or number
 * for options that take a value, or a list of those for repeatable ones.
 */
function fileKeys(command: Command, repeatable: ReadonlySet<string>): Map<string, FileKey> {
  const scalar = z.union([z.string(), z.number()]);
  const keys = new Map<string, FileKey>();
  for (const option of command.options as readonly Option[]) {
    const attribute = option.attributeName();
    if (NOT_IN_FILE.has(attribute)) continue;
    const schema = option.isBoolean() ? z.boolean() : repeatable.has(attribute) ? z.union([scalar, z.array(scalar)]) : scalar;
    keys.set(snakeCase(attribute), { attribute, flag: option.long ?? option.flags, schema });
  }
  return keys;
}

/** One line, whatever the parser said (smol-toml's messages carry a code excerpt). */
function parseError(path: string, error: unknown): ConfigError {
  if (error instanceof TomlError) return new ConfigError(`config file ${path}: invalid TOML at line ${error.line}, column ${error.column}: ${error.message.split('\n')[0]?.replace(/^Invalid TOML document: /, '')}`);
  return new ConfigError(`config file ${path}: invalid JSON: ${(error as Error).message.split('\n')[0]}`);
}

/**
 * Which file to read: the one `--config` names (which must exist), else `config.toml` or
 * `config.json` in the data directory, if either is there (both is ambiguous: refused).
 */
export function findConfigFile(explicit: string | undefined, dataDir: string | undefined): string | undefined {
  if (explicit !== undefined && explicit !== '') {
    const path = resolve(explicit);
    if (!existsSync(path)) throw new ConfigError(`--config ${explicit}: no such file.`);
    return path;
  }
  const dir = resolve(dataDir ?? join(homedir(), '.svc'));
  const found = ['config.toml', 'config.json'].map((name) => join(dir, name)).filter((p) => existsSync(p));
  if (found.length > 1) throw new ConfigError(`both ${found.join(' and ')} exist; keep one (or name it with --config).`);
  return found[0];
}

/** Reads and checks a config file against `command`'s options (`repeatable`: attributes that take a list). */
export function readConfigFile(path: string, command: Command, repeatable: ReadonlySet<string>): ConfigFile {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new ConfigError(`config file ${path}: cannot read it (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}).`);
  }
  let data: unknown;
  try {
    data = extname(path).toLowerCase() === '.json' ? JSON.parse(text) : parseToml(text);
  } catch (error) {
    throw parseError(path, error);
  }
  const keys = fileKeys(command, repeatable);
  const shape: Record<string, z.ZodType> = { upstreams: z.array(upstreamTableSchema).optional() };
  for (const [key, { schema }] of keys) shape[key] = schema.optional();
  const parsed = z.strictObject(shape).safeParse(data);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const at = issue.path.map((p, i) => (typeof p === 'number' ? `[${p}]` : i === 0 ? String(p) : `.${String(p)}`)).join('');
    if (issue.code === 'unrecognized_keys') {
      const where = at === '' ? '' : `${at}.`;
      const known = at === '' ? [...keys.keys(), 'upstreams'] : Object.keys(upstreamTableSchema.shape);
      throw new ConfigError(`config file ${path}: unknown key${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((k) => `'${where}${k}'`).join(', ')} (known: ${known.join(', ')}).`);
    }
    throw new ConfigError(`config file ${path}: '${at}': ${issue.message}.`);
  }
  const base = dirname(path);
  const options = new Map<string, string | string[] | boolean>();
  for (const [key, value] of Object.entries(parsed.data as Record<string, unknown>)) {
    const fileKey = keys.get(key);
    if (fileKey === undefined || value === undefined) continue;
    const { attribute } = fileKey;
    const text = (v: string | number): string => {
      const s = String(v);
      // developer_keys may be a postgres:// URL rather than a path.
      if (!PATH_KEYS.has(attribute) || /^[a-z][a-z0-9+.-]*:\/\//i.test(s)) return s;
      return attribute === 'model' ? expandModelSpec(s, base) : expandPath(s, base);
    };
    if (typeof value === 'boolean') options.set(attribute, value);
    else if (Array.isArray(value)) options.set(attribute, (value as (string | number)[]).map(text));
    else options.set(attribute, repeatable.has(attribute) ? [text(value as string | number)] : text(value as string | number));
  }
  return { path, options, upstreams: (parsed.data as { upstreams?: UpstreamTable[] }).upstreams ?? [] };
}

/**
 * The options to run with: what commander parsed from flags and SVC_* variables, and the
 * file's values for everything those left unset. An error message that names a flag whose
 * value came from the file says so, so the user looks in the right place.
 */
export function mergeConfigFile<T extends object>(command: Command, parsed: T, file: ConfigFile | undefined): { options: T; explain: (error: ConfigError) => ConfigError } {
  if (file === undefined) return { options: parsed, explain: (e) => e };
  const merged: Record<string, unknown> = { ...(parsed as Record<string, unknown>) };
  const fromFile = new Set<string>();
  for (const [attribute, value] of file.options) {
    const source = command.getOptionValueSource(attribute);
    if (source === 'cli' || source === 'env') continue;
    merged[attribute] = value;
    fromFile.add(attribute);
  }
  const flags = new Map((command.options as readonly Option[]).map((o) => [o.long ?? '', o.attributeName()]));
  return {
    options: merged as T,
    explain: (error) => {
      const flag = /^(--[a-z-]+)/.exec(error.message)?.[1];
      const attribute = flag === undefined ? undefined : flags.get(flag);
      if (attribute === undefined || !fromFile.has(attribute)) return error;
      return new ConfigError(`${error.message} (set by '${snakeCase(attribute)}' in ${file.path})`);
    },
  };
}
