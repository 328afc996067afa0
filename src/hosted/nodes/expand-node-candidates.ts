import { ApiError } from '../../shared/api-error.ts';
import type { FailedAttempt } from '../routing/all-backends-failed-error.ts';
import type { Candidate } from '../routing/route-planner.ts';
import type { NodePool } from './node-pool.ts';

/**
 * A `nodes` backend becomes one candidate per live node serving the model, least loaded first,
 * each with the backend's settings and an id and provider naming the node (`nodes@gpu-1`,
 * `svc-node@gpu-1`: the evidence names the node that served). A `nodes` backend with no live node
 * for the model is recorded as given up on (`no_live_node`), and one whose registry cannot be read
 * as `backend_error:node_registry_unavailable`; the executor then tries the next backend.
 */
export async function expandNodeCandidates(candidates: readonly Candidate[], pool: NodePool | undefined, hostedModel: string, attempts: FailedAttempt[]): Promise<Candidate[]> {
  const expanded: Candidate[] = [];
  for (const candidate of candidates) {
    if (candidate.backend.kind !== 'nodes') {
      expanded.push(candidate);
      continue;
    }
    let nodes;
    try {
      nodes = (await pool?.candidates(candidate.backendModel, hostedModel)) ?? [];
    } catch (error) {
      const code = error instanceof ApiError ? error.code : 'internal';
      attempts.push({ backend: candidate.backend.id, reason: `backend_error:${code}` });
      continue;
    }
    if (nodes.length === 0) attempts.push({ backend: candidate.backend.id, reason: 'no_live_node' });
    for (const node of nodes) {
      expanded.push({ ...candidate, node, backend: { ...candidate.backend, id: `${candidate.backend.id}@${node.nodeId}`, provider: `${candidate.backend.provider}@${node.nodeId}` } });
    }
  }
  return expanded;
}
