import { LOCAL_CONTEXT_HEADER } from './local-context-marker.ts';
import type { LocalRuntimeClient } from './local-runtime-client.ts';
import { ToolRefusal } from './tool-refusal.ts';

/** The marker header on a tool's model call: the daemon re-checks the model it resolves (local-context-marker.ts). */
export const LOCAL_CONTEXT: Readonly<Record<string, string>> = { [LOCAL_CONTEXT_HEADER]: '1' };

/**
 * The privacy rule for every tool that takes a model: the runtime must say the model is on this
 * machine (`plane: "local"`) before any tool input is sent to it. Fails closed: a missing,
 * unknown or misspelt plane (an older daemon, or something that is not svc) counts as remote.
 */
export async function requireLocalModel(runtime: LocalRuntimeClient, id: string, signal?: AbortSignal): Promise<void> {
  const described = await runtime.request('GET', `/v1/models/${encodeURIComponent(id)}`, undefined, signal);
  if (described.status === 404) throw new ToolRefusal(`No model '${id}' is served here; svc_list_models lists the ids.`);
  const body = described.body;
  if (described.status !== 200 || typeof body !== 'object' || body === null) {
    throw new ToolRefusal(`The local runtime answered ${described.status} when asked about model '${id}'.`);
  }
  const plane = (body as { plane?: unknown }).plane;
  if (plane === 'local') return;
  if (plane === 'remote') {
    throw new ToolRefusal(`Model '${id}' is served by a remote upstream; svc's tools only use models on this machine, so local context never leaves it. Pick a local model (svc_list_models shows each model's plane).`);
  }
  throw new ToolRefusal(`The runtime does not say where model '${id}' runs (no plane in its answer: an older svc daemon?), so svc's tools will not send it local context. Update the daemon or pick another model.`);
}
