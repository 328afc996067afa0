import { PullError } from './pull-error.ts';

/**
 * What `svc models pull` was asked for, parsed from one argument:
 * - `hf:owner/repo/path/file.gguf` (`.gguf` may be left off): one file of a hub repository;
 * - `hf:owner/repo:Q4_K_M`: the repository's one GGUF whose name carries that quantization tag;
 * - `hf:owner/repo`: the repository's Q4_K_M file, or its only GGUF (as Ollama and llama.cpp pick);
 * - `owner/repo`: list the repository's GGUF files, download nothing;
 * - `https://…/x.gguf`: any URL (a hub `resolve`/`blob` URL on the configured endpoint is read as
 *   the hub file it names, so it gets the hub's checksum and id).
 * `hf.co/owner/repo[:TAG]` and `huggingface.co/owner/repo[:TAG]` (Ollama's spelling) work too.
 */
export type ModelReference =
  | { kind: 'hub-file'; owner: string; repo: string; file: string; revision: string | undefined }
  | { kind: 'hub-quant'; owner: string; repo: string; tag: string | undefined; revision: string | undefined }
  | { kind: 'hub-repo'; owner: string; repo: string; revision: string | undefined }
  | { kind: 'url'; url: URL; fileName: string };

export const REFERENCE_FORMS = 'hf:owner/repo/file.gguf, hf:owner/repo:Q4_K_M, owner/repo (to list), or an https://…/file.gguf URL';

// The hub's own rule for user, organization and repository names (huggingface_hub's
// validate_repo_id): word characters, '.', '-', at most 96, no '--' or '..'.
const NAME = /^\w(?:[\w.-]{0,94}\w)?$/;

export function isValidHubName(name: string): boolean {
  return NAME.test(name) && !name.includes('--') && !name.includes('..') && !name.endsWith('.git');
}

/** `path/in/repo.gguf` split into safe segments: no empty, `.`, `..` or backslash-bearing parts. */
export function isSafeRepoPath(path: string): boolean {
  if (path.length === 0 || path.length > 1024) return false;
  return path.split('/').every((s) => s.length > 0 && s !== '.' && s !== '..' && !/[\\\0]/.test(s));
}

function invalid(input: string, why: string): PullError {
  return new PullError('invalid_reference', `'${input}' ${why}; expected ${REFERENCE_FORMS}`);
}

function hubNames(input: string, owner: string | undefined, repo: string | undefined): { owner: string; repo: string } {
  if (owner === undefined || repo === undefined || !isValidHubName(owner) || !isValidHubName(repo)) {
    throw invalid(input, 'does not name a hub repository as owner/repo');
  }
  return { owner, repo };
}

function withGguf(file: string): string {
  return file.toLowerCase().endsWith('.gguf') ? file : `${file}.gguf`;
}

function parseHubPath(input: string, rest: string, revision: string | undefined): ModelReference {
  const slash = rest.indexOf('/');
  const second = slash < 0 ? -1 : rest.indexOf('/', slash + 1);
  if (second < 0) {
    // owner/repo or owner/repo:TAG
    const colon = rest.indexOf(':');
    const [owner, repo] = (colon < 0 ? rest : rest.slice(0, colon)).split('/');
    const names = hubNames(input, owner, repo);
    if (colon < 0) return { kind: 'hub-quant', ...names, tag: undefined, revision };
    const tag = rest.slice(colon + 1);
    if (!/^[\w.-]{1,64}$/.test(tag)) throw invalid(input, 'has an empty or malformed quantization tag after \':\'');
    return { kind: 'hub-quant', ...names, tag, revision };
  }
  const names = hubNames(input, rest.slice(0, slash), rest.slice(slash + 1, second));
  const file = withGguf(rest.slice(second + 1));
  if (!isSafeRepoPath(file)) throw invalid(input, 'names a file path with empty, "." or ".." parts');
  return { kind: 'hub-file', ...names, file, revision };
}

/**
 * Parses a pull argument. `hubEndpoint` is where `hf:` references resolve (HF_ENDPOINT), so a
 * URL into that hub is recognized as a hub file; `revision` applies to hub references.
 */
export function parseModelReference(input: string, options: { hubEndpoint: string; revision?: string | undefined }): ModelReference {
  const text = input.trim();
  const { revision } = options;
  if (text.length === 0) throw invalid(input, 'is empty');
  if (/^hf:/i.test(text)) return parseHubPath(input, text.slice(3), revision);
  const shorthand = /^(?:hf\.co|huggingface\.co)\/(.*)$/i.exec(text);
  if (shorthand !== null) return parseHubPath(input, shorthand[1]!, revision);
  if (/^https?:\/\//i.test(text)) {
    let url: URL;
    try {
      url = new URL(text);
    } catch {
      throw invalid(input, 'is not a valid URL');
    }
    const hub = URL.parse(options.hubEndpoint);
    if (hub !== null && url.origin === hub.origin) {
      const base = hub.pathname.replace(/\/+$/, '');
      const path = url.pathname.startsWith(`${base}/`) ? url.pathname.slice(base.length + 1) : url.pathname.slice(1);
      const m = /^([^/]+)\/([^/]+)\/(?:resolve|blob)\/([^/]+)\/(.+)$/.exec(path);
      if (m !== null) {
        let parts: { owner: string; repo: string; file: string; revision: string };
        try {
          parts = { owner: decodeURIComponent(m[1]!), repo: decodeURIComponent(m[2]!), file: m[4]!.split('/').map(decodeURIComponent).join('/'), revision: decodeURIComponent(m[3]!) };
        } catch {
          throw invalid(input, 'has a malformed percent-encoding in its path');
        }
        const names = hubNames(input, parts.owner, parts.repo);
        if (!isSafeRepoPath(parts.file)) throw invalid(input, 'names a file path with empty, "." or ".." parts');
        return { kind: 'hub-file', ...names, file: parts.file, revision: parts.revision };
      }
    }
    let fileName: string;
    try {
      fileName = decodeURIComponent(url.pathname.slice(url.pathname.lastIndexOf('/') + 1));
    } catch {
      throw invalid(input, 'has a malformed percent-encoding in its path');
    }
    if (!fileName.toLowerCase().endsWith('.gguf') || fileName.length <= '.gguf'.length || /[/\\\0]/.test(fileName) || fileName.startsWith('.')) {
      throw invalid(input, 'does not end in a file name like model.gguf');
    }
    return { kind: 'url', url, fileName };
  }
  if (/^[^/:]+\/[^/:]+$/.test(text)) {
    const [owner, repo] = text.split('/');
    return { kind: 'hub-repo', ...hubNames(input, owner, repo), revision };
  }
  throw invalid(input, 'is not a model reference');
}
