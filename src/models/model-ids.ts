/**
 * How discovered models are named. Ids are what users type in `model`, so each follows the tool
 * the file came from: Ollama's own names, `hf:owner/repo/file` for Hugging Face files (the same
 * id whether the file sits in the hub cache or was pulled into svc's folder), and
 * `lmstudio:publisher/repo/file` for LM Studio's folder.
 */

/** `-00001-of-00003.gguf`: one part of a model split by llama.cpp's gguf-split. */
const SPLIT_SUFFIX = /-(\d{5})-of-(\d{5})\.gguf$/i;

export interface SplitPart {
  /** The name up to the `-NNNNN-of-NNNNN` suffix. */
  stem: string;
  /** 1-based. */
  part: number;
  count: number;
}

export function splitPartOf(fileName: string): SplitPart | undefined {
  const match = SPLIT_SUFFIX.exec(fileName);
  if (match === null) return undefined;
  const part = Number(match[1]);
  const count = Number(match[2]);
  if (part < 1 || count < 1 || part > count) return undefined;
  return { stem: fileName.slice(0, match.index), part, count };
}

/** The file name of part `part` of a split model whose first part is `firstPartName`. */
export function splitPartName(firstPartName: string, part: number): string {
  const split = splitPartOf(firstPartName);
  if (split === undefined) return firstPartName;
  const pad = (n: number) => String(n).padStart(5, '0');
  return `${split.stem}-${pad(part)}-of-${pad(split.count)}${firstPartName.slice(-'.gguf'.length)}`;
}

/**
 * A file's model id: its name without `.gguf`, and for a split model without the
 * `-00001-of-0000N` suffix (the id names the whole model, not its first file).
 * `Llama-3.2-1B-Instruct-Q4_K_M.gguf` → `Llama-3.2-1B-Instruct-Q4_K_M`.
 */
export function modelIdFromFileName(name: string): string {
  const split = splitPartOf(name);
  if (split !== undefined) return split.stem;
  return name.toLowerCase().endsWith('.gguf') ? name.slice(0, -'.gguf'.length) : name;
}

/**
 * `hf:owner/repo/file`: `file` is the path inside the repository (`Q4_K_M/model.gguf` keeps its
 * folder), without `.gguf` or a split suffix. `svc models pull` names what it places in
 * `<data-dir>/models/hf/<owner>/<repo>/<file>` with this same function.
 */
export function huggingFaceModelId(owner: string, repo: string, fileInRepo: string): string {
  const slash = fileInRepo.lastIndexOf('/');
  return `hf:${owner}/${repo}/${fileInRepo.slice(0, slash + 1)}${modelIdFromFileName(fileInRepo.slice(slash + 1))}`;
}

/** `lmstudio:publisher/repo/file`, from the path under LM Studio's models folder. */
export function lmStudioModelId(relativePath: string): string {
  const slash = relativePath.lastIndexOf('/');
  return `lmstudio:${relativePath.slice(0, slash + 1)}${modelIdFromFileName(relativePath.slice(slash + 1))}`;
}

const OLLAMA_DEFAULT_HOST = 'registry.ollama.ai';
const OLLAMA_DEFAULT_NAMESPACE = 'library';

/**
 * The name `ollama list` shows (Ollama's types/model Name.DisplayShortest): `model:tag` for the
 * default registry's `library` namespace, `namespace/model:tag` for another namespace there,
 * and `host/namespace/model:tag` for another registry. Host and namespace compare
 * case-insensitively, as in Ollama.
 */
export function ollamaModelId(host: string, namespace: string, model: string, tag: string): string {
  let prefix = '';
  if (host.toLowerCase() !== OLLAMA_DEFAULT_HOST) prefix = `${host}/${namespace}/`;
  else if (namespace.toLowerCase() !== OLLAMA_DEFAULT_NAMESPACE) prefix = `${namespace}/`;
  return `${prefix}${model}:${tag}`;
}
