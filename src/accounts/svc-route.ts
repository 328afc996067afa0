/**
 * Route evidence as the contract names it (`svc_route`), one per hosted chat response.
 * Units: `latency_ms` milliseconds; every `*_joules` in Joules; `raw_joules` is null unless measured.
 */
export interface SvcRoute {
  execution_plane: string;
  policy: string;
  privacy_tier: string;
  model: string;
  provider: string;
  latency_ms: number;
  raw_joules: number | null;
  estimated_joules: number;
  billable_joules: number;
  fallback: boolean;
  fallback_reason: string | null;
  /** The API key the request was made with (its id, never the secret); absent on evidence recorded before svc signed it. */
  key_id?: string;
  evidence_id: string;
  /** With an ML-DSA transport identity (--pqc-transport …,ml-dsa-65): its algorithm, key id and the signature over the rest (src/transport/evidence-signature.ts). */
  signature_alg?: string;
  signing_key_id?: string;
  signature?: string;
}
