import { useEffect, useRef, useState } from 'preact/hooks';
import { fetchModels, getJson, postJson, type Health, type ModelInfo } from '../api-client.ts';
import { useConnection } from '../connection-state.ts';
import { formatBytes, formatValue, plural } from '../format.ts';
import { ModelDeleteButton } from '../model-delete-button.tsx';
import { ModelPullForm } from '../model-pull-form.tsx';

/** Health and the model list are read again this often while the page is open (cheap, loopback). */
const REFRESH_MS = 5000;

interface RuntimeState {
  health?: Health;
  models?: ModelInfo[];
  error?: string;
}

function Fact(props: { label: string; value: unknown; testId?: string }) {
  return (
    <div class="fact">
      <dt>{props.label}</dt>
      <dd data-testid={props.testId}>{formatValue(props.value)}</dd>
    </div>
  );
}

/** `cipher` as the daemon reports it (`{suite, group, certificate}`), in one line. */
function cipherText(cipher: unknown): unknown {
  if (cipher === null || typeof cipher !== 'object') return cipher;
  const { suite, group, certificate } = cipher as { suite?: unknown; group?: unknown; certificate?: unknown };
  const parts = [suite, group === undefined ? undefined : `group ${String(group)}`, certificate === undefined ? undefined : `${String(certificate)} certificate`];
  return parts.some((p) => p === undefined) ? cipher : parts.join(', ');
}

/** Transport facts are shown only where the daemon reports them (`--pqc-transport`). */
function TransportFacts({ health }: { health: Health }) {
  const pqc = health.pqc_transport;
  const on = Array.isArray(pqc) ? pqc.length > 0 : pqc !== undefined && pqc !== null;
  return (
    <>
      <Fact label="PQC transport" value={on ? (Array.isArray(pqc) ? pqc.join(', ') : pqc) : 'off (plain HTTP)'} testId="pqc" />
      {health.tls !== undefined && health.tls !== null && <Fact label="TLS" value={health.tls} testId="tls" />}
      {health.cipher !== undefined && health.cipher !== null && <Fact label="Cipher" value={cipherText(health.cipher)} testId="cipher" />}
    </>
  );
}

/** Where a model came from, in words (`source` as /v1/models reports it). */
const SOURCE_WORDS: ReadonlyMap<string, string> = new Map([
  ['flag', 'command line (--model)'],
  ['svc', 'svc models folder'],
  ['ollama', 'Ollama'],
  ['huggingface', 'Hugging Face cache'],
  ['lmstudio', 'LM Studio'],
  ['builtin', 'built into svc'],
]);

/** The source in words; an upstream model (source null) is named by the upstream serving it. */
export function sourceWords(model: Pick<ModelInfo, 'source' | 'owned_by'>): string {
  if (model.source === null) return `upstream ${model.owned_by}`;
  return SOURCE_WORDS.get(model.source) ?? model.source;
}

function HealthPanel({ health, reachable }: { health: Health; reachable: boolean }) {
  const network = health.network ?? {};
  const model = health.model ?? {};
  const quantum = health.quantum ?? {};
  return (
    <section aria-labelledby="health-title" class="panel">
      <h2 id="health-title">
        Health{' '}
        {/* The last answer's "ok" would be a lie while the daemon does not answer. */}
        {reachable
          ? <span class={`badge ${health.status === 'ok' ? 'ok' : 'bad'}`} data-testid="status">{health.status}</span>
          : <span class="badge bad" data-testid="status">not answering</span>}
      </h2>
      <dl class="facts">
        <Fact label="Version" value={health.version} />
        <Fact label="Listening on" value={network.listen?.join(', ')} testId="listen" />
        <Fact label="Loopback only" value={network.loopback_only === undefined ? undefined : network.loopback_only ? 'yes' : 'NO'} testId="loopback" />
        <Fact label="MCP" value={network.mcp?.join(', ')} />
        <Fact label="Telemetry" value={health.telemetry} testId="telemetry" />
        <Fact label="Outbound connections" value={health.outbound_connections} testId="outbound" />
        <TransportFacts health={health} />
        <Fact label="Engine" value={model.engine === undefined ? undefined : `${model.engine}, ${model.threads === undefined ? '? threads' : plural(model.threads, 'thread')}, ${health.cpus === undefined ? '? CPUs' : plural(health.cpus, 'CPU')}`} />
        <Fact label="Generations" value={`${formatValue(model['active'])} running, ${formatValue(model['waiting'])} waiting`} />
        <Fact label="Solvers" value={quantum.solvers?.join(', ')} />
        <Fact label="Solves" value={`${formatValue(quantum.running)} running, ${formatValue(quantum.queued)} queued`} />
      </dl>
    </section>
  );
}

/** Models this daemon loads itself (GGUF files); upstream (`source` null) and built-in ones have nothing to load. */
function loadable(model: ModelInfo): boolean {
  return model.source !== null && model.source !== 'builtin';
}

/**
 * Load or Unload, by the state the daemon last reported (`POST /api/models/load|unload`). An
 * unload that must wait for running requests is answered `unloading`: the row says so until
 * the next refresh shows it gone.
 */
function ResidencyButton({ model, onChanged, reachable }: { model: ModelInfo; onChanged: (m: ModelInfo) => void; reachable: boolean }) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  if (!loadable(model)) return <span class="muted">—</span>;
  const loaded = model.state === 'loaded' || model.state === 'unloading';
  const act = async () => {
    setBusy(true);
    setError(undefined);
    try {
      onChanged(await postJson<ModelInfo>(loaded ? '/api/models/unload' : '/api/models/load', { model: model.id }));
    } catch (e) {
      setError((e as Error).message);
    } finally {
      setBusy(false);
    }
  };
  return (
    <>
      <button type="button" class="small" data-model-action={loaded ? 'unload' : 'load'} aria-label={`${loaded ? 'Unload' : 'Load'} ${model.id}`} disabled={busy || !reachable} onClick={() => void act()}>
        {busy ? (loaded ? 'Unloading…' : 'Loading…') : loaded ? 'Unload' : 'Load'}
      </button>
      {error !== undefined && <span role="alert" class="error inline">{error}</span>}
    </>
  );
}

/** Tokens, grouped for reading (131072 → "131,072 tokens"). */
function contextWords(tokens: number | null): string {
  return tokens === null ? '—' : `${tokens.toLocaleString('en-US')} tokens`;
}

/**
 * Residency comes right after the name, so on a phone the Load button is on screen without
 * scrolling the table sideways; the facts follow. Memory in use is what the daemon reports for
 * a loaded model (`memory_bytes`: weights plus the generation context), a dash otherwise.
 */
function ModelsTable({ models, onChanged, onDeleted, reachable }: { models: ModelInfo[]; onChanged: (m: ModelInfo) => void; onDeleted: (id: string) => void; reachable: boolean }) {
  if (models.length === 0) return <p>No models are served. Pull one above, put a GGUF file in <code>~/.svc/models</code>, or start with <code>--model</code>.</p>;
  return (
    // Focusable, so a keyboard can scroll the facts that do not fit a phone into view.
    <div class="table-scroll" tabIndex={0} role="region" aria-label="Models table">
      <table id="models">
        <caption>Models served by this daemon{reachable ? '' : ' (as last read)'}</caption>
        <thead>
          <tr><th scope="col">Model</th><th scope="col">Residency</th><th scope="col">Memory in use</th><th scope="col">Size on disk</th><th scope="col">Quantization</th><th scope="col">Parameters</th><th scope="col">Context</th><th scope="col">Source</th></tr>
        </thead>
        <tbody>
          {models.map((m) => (
            <tr key={m.id} data-model={m.id}>
              <th scope="row" class="model-id">{m.id}</th>
              <td class="residency">
                {/* While the daemon does not answer, its last word on residency may no longer hold. */}
                <span class={`badge ${reachable && m.state === 'loaded' ? 'ok' : ''}`} data-testid="model-state" title={reachable ? undefined : `last read: ${m.state}`}>{reachable ? m.state : 'unknown'}</span>{' '}
                <ResidencyButton model={m} onChanged={onChanged} reachable={reachable} />{' '}
                <ModelDeleteButton model={m} onDeleted={onDeleted} reachable={reachable} />
              </td>
              <td data-testid="model-memory">{m.state === 'loaded' ? formatBytes(m.memory_bytes ?? null) : '—'}</td>
              <td>{formatBytes(m.size_bytes)}</td>
              <td>{m.quantization ?? '—'}</td>
              <td>{m.parameter_size ?? '—'}</td>
              <td>{contextWords(m.max_context_length)}</td>
              <td data-testid="model-source">{sourceWords(m)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

export function RuntimePage() {
  const [state, setState] = useState<RuntimeState>({});
  const connection = useConnection();
  // Counts loads and unloads done from this page: a read that began before one of them may
  // carry the state from before it, and is then dropped and read again.
  const changes = useRef(0);
  const refresh = useRef<() => Promise<void>>(async () => {});
  useEffect(() => {
    const abort = new AbortController();
    // A daemon busy generating can take longer than REFRESH_MS to answer: a tick while the last
    // load is still waiting is skipped, so polls never pile up on it.
    let loading = false;
    const load = async (): Promise<void> => {
      if (loading) return;
      loading = true;
      const at = changes.current;
      try {
        // Read apart: /health needs no developer key, so it shows while the models wait for one.
        const [health, models] = await Promise.allSettled([getJson<Health>('/health', abort.signal), fetchModels(abort.signal)]);
        const failed = [health, models].find((r) => r.status === 'rejected');
        if (!abort.signal.aborted && at === changes.current) {
          setState((s) => ({
            health: health.status === 'fulfilled' ? health.value : s.health,
            models: models.status === 'fulfilled' ? models.value.data : s.models,
            ...(failed === undefined ? {} : { error: (failed.reason as Error).message }),
          }));
        }
      } finally {
        loading = false;
      }
      if (at !== changes.current && !abort.signal.aborted) await load();
    };
    refresh.current = load;
    void load();
    const timer = setInterval(() => { if (document.visibilityState === 'visible') void load(); }, REFRESH_MS);
    return () => {
      clearInterval(timer);
      abort.abort();
    };
  }, []);
  // Back from an outage: read now rather than at the next tick.
  useEffect(() => { if (connection.generation > 0) void refresh.current(); }, [connection.generation]);
  return (
    <>
      {/* An unreachable daemon is the shell's banner (connection-banner.tsx); other refusals are said here. */}
      {state.error !== undefined && connection.reachable && <p role="alert" class="error">The daemon did not answer: {state.error}</p>}
      {state.health === undefined ? <p aria-busy={connection.reachable}>{connection.reachable ? 'Reading /health…' : 'Nothing read yet.'}</p> : <HealthPanel health={state.health} reachable={connection.reachable} />}
      <section aria-labelledby="models-title" class="panel">
        <h2 id="models-title">Models</h2>
        <ModelPullForm reachable={connection.reachable} onPulled={() => { changes.current++; void refresh.current(); }} />
        {state.models !== undefined && (
          <ModelsTable
            models={state.models}
            reachable={connection.reachable}
            onDeleted={(id) => {
              changes.current++;
              setState((s) => ({ ...s, models: s.models?.filter((m) => m.id !== id) }));
              void refresh.current();
            }}
            onChanged={(changed) => {
              // The answer is the model's new row; the rest of the page follows with the next read.
              changes.current++;
              setState((s) => ({ ...s, models: s.models?.map((m) => (m.id === changed.id ? changed : m)) }));
              void refresh.current();
            }}
          />
        )}
      </section>
    </>
  );
}
