/** A model file a scanner found, before its header is read. */
export interface ModelCandidate {
  id: string;
  /** The GGUF file llama.cpp opens (the first part of a split model). */
  path: string;
  /** Every file of the model, `path` first. */
  parts: string[];
  /** When the model arrived, where the store knows better than the file (Ollama: the manifest). */
  modifiedMs?: number;
}

export interface ScanResult {
  candidates: ModelCandidate[];
  warnings: string[];
}
