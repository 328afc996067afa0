import { useEffect, useState } from 'preact/hooks';
import { ApiCallError, getJson } from '../api-client.ts';
import { JoulesChart } from '../joules-chart.tsx';
import { joules, RecentEvidenceTable, type EvidenceFacts, type RecentRow } from './usage-evidence.tsx';

/**
 * The hosted usage page (`svc hosted`, `/api/console/usage`), read with the session cookie from
 * the public API only: `GET /api/v1/usage` (a signed-in session sees its whole account),
 * `GET /api/keys` for the keys' names and `GET /api/v1/evidence/:id` for each recent row's
 * outcome, tokens and estimated and measured Joules. Paths are relative to the page, so the
 * hosted server can sit behind a proxy's path prefix.
 */
const USAGE = '../v1/usage';
const EVIDENCE = '../v1/evidence/';
const KEYS = '../keys';
const SESSION = '../session';
const KEY_PAGE = '../../settings/api-keys';

/** Requests and their tokens, as the report writes them beside Joules. */
interface Counts {
  requests: number;
  prompt_tokens: number;
  completion_tokens: number;
}

interface UsageReport {
  month: string;
  accounting_source: string;
  joules_used: number;
  joules_remaining: number;
  joules_allowance: number;
  daily: ({ date: string; joules: number } & Counts)[];
  keys: ({ key_id: string; joules: number } & Counts)[];
  keys_truncated: boolean;
  projects: ({ project_id: string; joules: number } & Counts)[];
  projects_truncated: boolean;
  recent_evidence: RecentRow[];
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
  | { status: 'ready'; report: UsageReport; keys: Map<string, KeyMeta>; facts: Map<string, EvidenceFacts> };

function sum(rows: readonly Counts[], field: keyof Counts): number {
  return rows.reduce((n, r) => n + r[field], 0);
}

/** Each recent row's billing facts from the evidence route; a row whose read fails is left out (the table says so). */
async function evidenceFacts(rows: readonly RecentRow[], signal: AbortSignal): Promise<Map<string, EvidenceFacts>> {
  const read = await Promise.allSettled(rows.map((r) => getJson<EvidenceFacts>(`${EVIDENCE}${encodeURIComponent(r.evidence_id)}`, signal)));
  const facts = new Map<string, EvidenceFacts>();
  read.forEach((result, i) => { if (result.status === 'fulfilled') facts.set(rows[i]!.evidence_id, result.value); });
  return facts;
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
        <div class="fact"><dt>Requests</dt><dd id="requests">{sum(report.daily, 'requests')}</dd></div>
        <div class="fact"><dt>Prompt tokens</dt><dd id="prompt-tokens">{sum(report.daily, 'prompt_tokens').toLocaleString('en-US')}</dd></div>
        <div class="fact"><dt>Completion tokens</dt><dd id="completion-tokens">{sum(report.daily, 'completion_tokens').toLocaleString('en-US')}</dd></div>
      </dl>
      <label for="allowance-meter">Share of the allowance used: {percent(report.joules_used, report.joules_allowance)}</label>
      <meter id="allowance-meter" min={0} max={1} low={0.75} high={0.9} optimum={0} value={share} />
    </section>
  );
}

function CountHeads() {
  return <><th scope="col">Requests</th><th scope="col">Prompt tokens</th><th scope="col">Completion tokens</th></>;
}

function CountCells({ counts }: { counts: Counts }) {
  return <><td data-field="requests">{counts.requests}</td><td data-field="prompt-tokens">{counts.prompt_tokens}</td><td data-field="completion-tokens">{counts.completion_tokens}</td></>;
}

function Breakdown(props: { id: string; title: string; rows: ({ label: string; joules: number } & Counts)[]; total: number; truncated: boolean; empty: string }) {
  return (
    <section class="panel" aria-labelledby={`${props.id}-title`}>
      <h2 id={`${props.id}-title`}>{props.title}</h2>
      {props.rows.length === 0 ? <p>{props.empty}</p> : (
        <div class="table-scroll" tabIndex={0} role="region" aria-label={`${props.title}, scrolls sideways`}>
          <table id={props.id}>
            <thead><tr><th scope="col">{props.title.replace(/^Per /, '').replace(/^./, (c) => c.toUpperCase())}</th><CountHeads /><th scope="col">Joules</th><th scope="col">Share</th></tr></thead>
            <tbody>
              {props.rows.map((r) => (
                <tr key={r.label}><th scope="row">{r.label}</th><CountCells counts={r} /><td>{joules(r.joules)}</td><td>{percent(r.joules, props.total)}</td></tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {props.truncated && <p class="muted">Only the 100 with the most Joules are listed.</p>}
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
        const facts = await evidenceFacts(report.recent_evidence, abort.signal);
        setLoaded({ status: 'ready', report, keys: new Map(keyList.data.map((k) => [k.id, k])), facts });
      } catch (error) {
        if (abort.signal.aborted) return;
        const signedOut = error instanceof ApiCallError && error.status === 401;
        setLoaded({ status: signedOut ? 'signed-out' : 'error', message: (error as Error).message });
      }
    })();
    return () => abort.abort();
  }, [month]);

  const signOut = async () => {
    await fetch(SESSION, { method: 'DELETE', credentials: 'same-origin', headers: { 'content-type': 'application/json' }, body: '{}' }).catch(() => undefined);
    setLoaded({ status: 'signed-out', message: 'Signed out.' });
  };

  return (
    <>
      <header class="top">
        <span class="brand">svc</span>
        <nav aria-label="Hosted pages">
          <a href={KEY_PAGE}>API keys</a>
          <a href="./usage" aria-current="page">Usage</a>
        </nav>
        {loaded.status !== 'signed-out' && <button type="button" id="sign-out" class="top-button" onClick={() => void signOut()}>Sign out</button>}
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
              <h3 id="daily-table-title">Per day <span class="muted">(days with usage, UTC)</span></h3>
              <div class="table-scroll" tabIndex={0} role="region" aria-labelledby="daily-table-title">
                <table id="daily">
                  <thead><tr><th scope="col">Day</th><CountHeads /><th scope="col">Joules</th></tr></thead>
                  <tbody>{loaded.report.daily.map((d) => <tr key={d.date}><th scope="row">{d.date}</th><CountCells counts={d} /><td>{joules(d.joules)}</td></tr>)}</tbody>
                </table>
              </div>
            </section>
            <div class="two-columns">
              <Breakdown
                id="per-key" title="Per key" total={loaded.report.joules_used} truncated={loaded.report.keys_truncated} empty="No key was used this month."
                rows={loaded.report.keys.map((k) => ({ ...k, label: keyLabel(loaded.keys, k.key_id) }))}
              />
              <Breakdown
                id="per-project" title="Per project" total={loaded.report.joules_used} truncated={loaded.report.projects_truncated}
                empty="No request named a project (x-svc-project-id) this month."
                rows={loaded.report.projects.map((p) => ({ ...p, label: p.project_id }))}
              />
            </div>
            <RecentEvidenceTable rows={loaded.report.recent_evidence} facts={loaded.facts} keyLabel={(id) => keyLabel(loaded.keys, id)} />
            <p class="muted">Manage the keys these figures are billed to at <a href={KEY_PAGE}>API keys</a>.</p>
          </>
        )}
      </main>
    </>
  );
}
