import { useEffect, useState } from 'preact/hooks';
import { ApiCallError, getJson } from '../api-client.ts';
import { formatValue } from '../format.ts';
import { JoulesChart } from '../joules-chart.tsx';
// Types only (erased from the bundle): the route facts a usage report lists per evidence id.
import type { RecentEvidence } from '../../../src/accounts/usage-store.ts';

/**
 * The hosted usage page (`svc hosted`, `/api/console/usage`), read with the session cookie from
 * the public API only: `GET /api/v1/usage` (a signed-in session sees its whole account) and
 * `GET /api/keys` for the keys' names. Paths are relative to the page, so the hosted server
 * can sit behind a proxy's path prefix.
 */
const USAGE = '../v1/usage';
const KEYS = '../keys';
const KEY_PAGE = '../../settings/api-keys';


interface UsageReport {
  month: string;
  accounting_source: string;
  joules_used: number;
  joules_remaining: number;
  joules_allowance: number;
  daily: { date: string; joules: number; requests: number }[];
  keys: { key_id: string; requests: number; joules: number }[];
  keys_truncated: boolean;
  projects: { project_id: string; requests: number; joules: number }[];
  projects_truncated: boolean;
  recent_evidence: { evidence_id: string; created_at: string; key_id: string; project_id: string | null; joules: number; route: RecentEvidence['route'] }[];
  source_descriptor: { store: string };
}

interface KeyMeta {
  id: string;
  name: string | null;
  scope: string;
  prefix: string;
  last_four: string;
  revoked_at: string | null;
}

type Loaded =
  | { status: 'loading' }
  | { status: 'signed-out'; message: string }
  | { status: 'error'; message: string }
  | { status: 'ready'; report: UsageReport; keys: Map<string, KeyMeta> };

/** Joules as the ledger keeps them (millijoules), with thousands separators. */
function joules(value: number): string {
  return `${value.toLocaleString('en-US', { maximumFractionDigits: 3 })} J`;
}

function percent(part: number, whole: number): string {
  if (whole <= 0) return '—';
  const share = (part / whole) * 100;
  // A little used of a large allowance is not "0.0 %".
  return part > 0 && share < 0.1 ? '< 0.1 %' : `${share.toFixed(1)} %`;
}

function currentMonth(): string {
  return new Date().toISOString().slice(0, 7);
}

function keyLabel(keys: Map<string, KeyMeta>, id: string): string {
  const key = keys.get(id);
  if (key === undefined) return id;
  const shown = `${key.prefix}…${key.last_four}`;
  return `${key.name ?? shown}${key.name === null ? '' : ` (${shown})`}${key.revoked_at === null ? '' : ', revoked'}`;
}

function Allowance({ report }: { report: UsageReport }) {
  const share = report.joules_allowance > 0 ? Math.min(1, report.joules_used / report.joules_allowance) : 0;
  return (
    <section class="panel" aria-labelledby="allowance-title">
      <h2 id="allowance-title">Joules this month <span class="muted">({report.month}, UTC; from the {report.accounting_source})</span></h2>
      <dl class="facts">
        <div class="fact"><dt>Used</dt><dd id="joules-used">{joules(report.joules_used)}</dd></div>
        <div class="fact"><dt>Allowance</dt><dd id="joules-allowance">{joules(report.joules_allowance)}</dd></div>
        <div class="fact"><dt>Remaining</dt><dd id="joules-remaining">{joules(report.joules_remaining)}</dd></div>
        <div class="fact"><dt>Requests</dt><dd id="requests">{report.daily.reduce((n, d) => n + d.requests, 0)}</dd></div>
      </dl>
      <label for="allowance-meter">Share of the allowance used: {percent(report.joules_used, report.joules_allowance)}</label>
      <meter id="allowance-meter" min={0} max={1} low={0.75} high={0.9} optimum={0} value={share} />
    </section>
  );
}

function Breakdown(props: { id: string; title: string; rows: { label: string; requests: number; joules: number }[]; total: number; truncated: boolean; empty: string }) {
  return (
    <section class="panel" aria-labelledby={`${props.id}-title`}>
      <h2 id={`${props.id}-title`}>{props.title}</h2>
      {props.rows.length === 0 ? <p>{props.empty}</p> : (
        <div class="table-scroll" tabIndex={0} role="region" aria-label={`${props.title}, scrolls sideways`}>
          <table id={props.id}>
            <thead><tr><th scope="col">{props.title.replace(/^Per /, '').replace(/^./, (c) => c.toUpperCase())}</th><th scope="col">Requests</th><th scope="col">Joules</th><th scope="col">Share</th></tr></thead>
            <tbody>
              {props.rows.map((r) => (
                <tr key={r.label}><th scope="row">{r.label}</th><td>{r.requests}</td><td>{joules(r.joules)}</td><td>{percent(r.joules, props.total)}</td></tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {props.truncated && <p class="muted">Only the 100 with the most Joules are listed.</p>}
    </section>
  );
}

function RecentEvidence({ report, keys }: { report: UsageReport; keys: Map<string, KeyMeta> }) {
  return (
    <section class="panel" aria-labelledby="evidence-title">
      <h2 id="evidence-title">Recent route evidence <span class="muted">(newest {report.recent_evidence.length})</span></h2>
      {report.recent_evidence.length === 0 ? <p>No hosted requests this month.</p> : (
        // Wider than a phone: the region scrolls, and keyboard users can scroll it too.
        <div class="table-scroll" tabIndex={0} role="region" aria-label="Recent route evidence, scrolls sideways">
          <table id="recent-evidence">
            <thead>
              <tr>
                <th scope="col">Evidence</th><th scope="col">When (UTC)</th><th scope="col">Key</th><th scope="col">Project</th><th scope="col">Policy</th>
                <th scope="col">Plane</th><th scope="col">Privacy</th><th scope="col">Model</th><th scope="col">Provider</th><th scope="col">Latency</th>
                <th scope="col">Joules</th><th scope="col">Fallback</th>
              </tr>
            </thead>
            <tbody>
              {report.recent_evidence.map((e) => {
                const r = e.route;
                return (
                  <tr key={e.evidence_id} data-evidence={e.evidence_id}>
                    <th scope="row"><code>{e.evidence_id}</code></th>
                    <td>{e.created_at.replace('T', ' ').replace(/\.\d+Z$/, '')}</td>
                    <td>{keyLabel(keys, e.key_id)}</td>
                    <td>{e.project_id ?? '—'}</td>
                    <td>{r.policy}</td>
                    <td>{r.execution_plane}</td>
                    <td>{r.privacy_tier}</td>
                    <td>{r.model}</td>
                    <td>{r.provider}</td>
                    <td>{r.latency_ms} ms</td>
                    <td data-field="joules">{joules(e.joules)}</td>
                    <td>{r.fallback ? `yes: ${formatValue(r.fallback_reason)}` : 'no'}</td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

export function UsagePage() {
  const [month, setMonth] = useState(currentMonth());
  const [loaded, setLoaded] = useState<Loaded>({ status: 'loading' });
  useEffect(() => {
    document.title = 'Usage · svc';
    const abort = new AbortController();
    setLoaded({ status: 'loading' });
    (async () => {
      try {
        const [report, keyList] = await Promise.all([
          getJson<UsageReport>(`${USAGE}?month=${encodeURIComponent(month)}`, abort.signal),
          getJson<{ data: KeyMeta[] }>(KEYS, abort.signal),
        ]);
        setLoaded({ status: 'ready', report, keys: new Map(keyList.data.map((k) => [k.id, k])) });
      } catch (error) {
        if (abort.signal.aborted) return;
        const signedOut = error instanceof ApiCallError && error.status === 401;
        setLoaded({ status: signedOut ? 'signed-out' : 'error', message: (error as Error).message });
      }
    })();
    return () => abort.abort();
  }, [month]);

  return (
    <>
      <header class="top">
        <span class="brand">svc</span>
        <nav aria-label="Account pages">
          <a href="./usage" aria-current="page">Usage</a>
          <a href={KEY_PAGE}>API keys</a>
        </nav>
      </header>
      <main id="page">
        <h1>Usage</h1>
        <div class="row">
          <label for="usage-month">Month (UTC)</label>
          <input id="usage-month" type="month" class="narrow-month" value={month} max={currentMonth()} onChange={(e) => { if (e.currentTarget.value !== '') setMonth(e.currentTarget.value); }} />
        </div>
        {loaded.status === 'loading' && <p aria-busy="true">Reading the ledger…</p>}
        {loaded.status === 'signed-out' && (
          <p id="signed-out" role="alert">You are not signed in. Open a sign-in link from your operator (<code>svc admin sign-in-link</code>), then come back; your keys are at <a href={KEY_PAGE}>API keys</a>.</p>
        )}
        {loaded.status === 'error' && <p id="usage-error" role="alert" class="error">{loaded.message}</p>}
        {loaded.status === 'ready' && (
          <>
            <Allowance report={loaded.report} />
            <section class="panel" aria-labelledby="daily-title">
              <h2 id="daily-title">Joules per day</h2>
              <JoulesChart month={loaded.report.month} daily={loaded.report.daily} />
              <details>
                <summary>The figures</summary>
                <table id="daily">
                  <thead><tr><th scope="col">Day</th><th scope="col">Requests</th><th scope="col">Joules</th></tr></thead>
                  <tbody>{loaded.report.daily.map((d) => <tr key={d.date}><th scope="row">{d.date}</th><td>{d.requests}</td><td>{joules(d.joules)}</td></tr>)}</tbody>
                </table>
              </details>
            </section>
            <div class="two-columns">
              <Breakdown
                id="per-key" title="Per key" total={loaded.report.joules_used} truncated={loaded.report.keys_truncated} empty="No key was used this month."
                rows={loaded.report.keys.map((k) => ({ label: keyLabel(loaded.keys, k.key_id), requests: k.requests, joules: k.joules }))}
              />
              <Breakdown
                id="per-project" title="Per project" total={loaded.report.joules_used} truncated={loaded.report.projects_truncated}
                empty="No request named a project (x-svc-project-id) this month."
                rows={loaded.report.projects.map((p) => ({ label: p.project_id, requests: p.requests, joules: p.joules }))}
              />
            </div>
            <RecentEvidence report={loaded.report} keys={loaded.keys} />
            <p class="muted">Manage the keys these figures are billed to at <a href={KEY_PAGE}>API keys</a>.</p>
          </>
        )}
      </main>
    </>
  );
}
