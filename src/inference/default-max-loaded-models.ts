/**
 * Models the llama.cpp engine keeps in memory at once unless `--max-loaded-models` says
 * otherwise: Ollama's default on CPU (OLLAMA_MAX_LOADED_MODELS, 3 per GPU there). Each model
 * holds its weights and a context of `--parallel` × `--context-size` tokens, so without a
 * bound a load per catalog model could take all memory. Its own file so the CLI's config
 * parsing does not import the engine.
 */
export const DEFAULT_MAX_LOADED_MODELS = 3;
