import { formatValue } from '../format.ts';
// Types only (erased from the bundle): the route facts a usage report lists per evidence id.
import type { RecentEvidence } from '../../../src/accounts/usage-store.ts';

/** One of the usage report's `recent_evidence` rows (ids, Joules, the route's non-billing facts). */
export interface RecentRow {
  evidence_id: string;
  created_at: string;
  key_id: string;
  project_id: string | null;
  joules: number;
  route: RecentEvidence['route'];
}

/**
 * What `GET /api/v1/evidence/:id` adds for a row: how it ended, its tokens, and the estimated
 * and measured Joules beside the billable ones. The usage report leaves these out (the contract:
 * usage exposes no route-evidence-linked billing events), so the page reads them per row.
 */
export interface EvidenceFacts {
  outcome: string;
  prompt_tokens: number;
  completion_tokens: number;
  svc_route: { estimated_joules: number; raw_joules: number | null };
}

/** Joules as the ledger keeps them (millijoules), with thousands separators. */
export function joules(value: number): string {
  return `${value.toLocaleString('en-US', { maximumFractionDigits: 3 })} J`;
}

/** An ISO 8601 instant as `YYYY-MM-DD HH:MM:SS` (UTC, as the ledger writes it). */
export function utc(iso: string): string {
  return iso.replace('T', ' ').replace(/(\.\d+)?Z$/, '');
}

export function RecentEvidenceTable(props: { rows: readonly RecentRow[]; facts: ReadonlyMap<string, EvidenceFacts>; keyLabel: (id: string) => string }) {
  const { rows, facts } = props;
  return (
    <section class="panel evidence-panel" aria-labelledby="evidence-title">
      <h2 id="evidence-title">Recent route evidence <span class="muted">(newest {rows.length})</span></h2>
      {rows.length === 0 ? <p>No hosted requests this month.</p> : (
        // Wider than its panel: the region scrolls sideways inside it, and keyboard users can scroll it too.
        <div class="table-scroll" tabIndex={0} role="region" aria-label="Recent route evidence, scrolls sideways">
          <table id="recent-evidence">
            <thead>
              <tr>
                <th scope="col">Evidence</th><th scope="col">When (UTC)</th><th scope="col">Key</th><th scope="col">Project</th>
                <th scope="col">Outcome</th><th scope="col">Prompt tokens</th><th scope="col">Completion tokens</th>
                <th scope="col">Billable</th><th scope="col">Estimated</th><th scope="col">Measured</th>
                <th scope="col">Policy</th><th scope="col">Plane</th><th scope="col">Privacy</th><th scope="col">Model</th><th scope="col">Provider</th>
                <th scope="col">Latency</th><th scope="col">Fallback</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((e) => {
                const r = e.route;
                const f = facts.get(e.evidence_id);
                return (
                  <tr key={e.evidence_id} data-evidence={e.evidence_id}>
                    <th scope="row"><code>{e.evidence_id}</code></th>
                    <td>{utc(e.created_at)}</td>
                    <td>{props.keyLabel(e.key_id)}</td>
                    <td>{e.project_id ?? '—'}</td>
                    <td data-field="outcome">{f?.outcome ?? '—'}</td>
                    <td data-field="prompt-tokens">{f?.prompt_tokens ?? '—'}</td>
                    <td data-field="completion-tokens">{f?.completion_tokens ?? '—'}</td>
                    <td data-field="joules">{joules(e.joules)}</td>
                    <td data-field="estimated-joules">{f === undefined ? '—' : joules(f.svc_route.estimated_joules)}</td>
                    <td data-field="measured-joules">{f === undefined ? '—' : f.svc_route.raw_joules === null ? 'not measured' : joules(f.svc_route.raw_joules)}</td>
                    <td>{r.policy}</td>
                    <td>{r.execution_plane}</td>
                    <td>{r.privacy_tier}</td>
                    <td>{r.model}</td>
                    <td>{r.provider}</td>
                    <td>{r.latency_ms} ms</td>
                    <td>{r.fallback ? `yes: ${formatValue(r.fallback_reason)}` : 'no'}</td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
      {rows.length > 0 && facts.size < rows.length && (
        <p class="muted" id="evidence-facts-missing">The outcome, tokens and estimated and measured Joules of {rows.length - facts.size} rows could not be read (GET /api/v1/evidence/:id); reload to try again.</p>
      )}
    </section>
  );
}
