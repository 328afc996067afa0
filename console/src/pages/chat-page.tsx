import { useEffect, useRef, useState } from 'preact/hooks';
import { chatModels, fetchModels, fetchSpaces, postStream, type ModelInfo } from '../api-client.ts';
import { formatNumber } from '../format.ts';
import { HighlightedSnippet, passagePlace } from '../highlighted-snippet.tsx';
import type { RetrievalExtension } from '../../../src/spaces/retrieval-extension.ts';
import { curlSnippet, openaiJsSnippet, openaiPythonSnippet } from '../request-snippets.ts';
import { StreamChart, type StreamPoint } from '../stream-chart.tsx';

interface Message {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

interface Timing {
  ttftMs?: number;
  tokensPerSecond?: number;
  completionTokens?: number;
  totalMs?: number;
}

/** `svc_retrieval` (docs/spaces.md, "Retrieval in chat"), on the chunk that carries `finish_reason`: the daemon's own type. */
type Retrieval = RetrievalExtension;

interface ChatChunk {
  choices?: { delta?: { content?: string | null } }[];
  usage?: { completion_tokens?: number } | null;
  svc_retrieval?: Retrieval;
}

type SnippetKind = 'curl' | 'openai-js' | 'openai-python';

function snippetFor(kind: SnippetKind, body: object): string {
  const origin = location.origin;
  if (kind === 'curl') return curlSnippet(origin, body);
  return kind === 'openai-js' ? openaiJsSnippet(origin, body) : openaiPythonSnippet(origin, body);
}

export function ChatPage() {
  const [models, setModels] = useState<ModelInfo[] | undefined>();
  const [model, setModel] = useState('');
  const [system, setSystem] = useState('');
  const [prompt, setPrompt] = useState('');
  const [maxTokens, setMaxTokens] = useState(256);
  const [history, setHistory] = useState<Message[]>([]);
  const [reply, setReply] = useState('');
  const [points, setPoints] = useState<StreamPoint[]>([]);
  const [timing, setTiming] = useState<Timing>({});
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | undefined>();
  const [snippet, setSnippet] = useState<{ kind: SnippetKind; text: string } | undefined>();
  const [copied, setCopied] = useState('');
  const [spaces, setSpaces] = useState<string[]>([]);
  const [chosenSpaces, setChosenSpaces] = useState<string[]>([]);
  const [retrieval, setRetrieval] = useState<Retrieval | undefined>();
  const abort = useRef<AbortController | null>(null);

  useEffect(() => {
    const controller = new AbortController();
    fetchModels(controller.signal)
      .then((list) => {
        const usable = chatModels(list);
        setModels(usable);
        setModel((current) => current || (usable[0]?.id ?? ''));
      })
      .catch((e: unknown) => { if (!controller.signal.aborted) setError((e as Error).message); });
    // Spaces are optional here: with none (or none listed), the page is a plain chat.
    fetchSpaces(controller.signal).then((list) => setSpaces(list.data.map((s) => s.name)), () => setSpaces([]));
    return () => controller.abort();
  }, []);
  useEffect(() => () => abort.current?.abort(), []);

  const requestBody = (messages: Message[]) => ({
    model,
    messages: system.trim() === '' ? messages : [{ role: 'system', content: system }, ...messages],
    max_tokens: maxTokens,
    stream: true,
    stream_options: { include_usage: true },
    ...(chosenSpaces.length === 0 ? {} : { spaces: chosenSpaces }),
  });

  const send = async (event: Event) => {
    event.preventDefault();
    if (busy || model === '' || prompt.trim() === '') return;
    const messages: Message[] = [...history, { role: 'user', content: prompt }];
    const body = requestBody(messages);
    const controller = new AbortController();
    abort.current = controller;
    setBusy(true);
    setError(undefined);
    setReply('');
    setPoints([]);
    setTiming({});
    setRetrieval(undefined);
    setHistory(messages);
    setPrompt('');
    const started = performance.now();
    let first: number | undefined;
    let last = started;
    let text = '';
    let chunks = 0;
    let completionTokens: number | undefined;
    const collected: StreamPoint[] = [{ ms: 0, chunks: 0 }];
    let failed = false;
    try {
      await postStream('/v1/chat/completions', body, (data) => {
        const chunk = data as ChatChunk;
        const delta = chunk.choices?.[0]?.delta?.content;
        if (typeof delta === 'string' && delta !== '') {
          const now = performance.now();
          first ??= now;
          last = now;
          text += delta;
          chunks++;
          collected.push({ ms: Math.round(now - started), chunks });
          setReply(text);
          setPoints([...collected]);
          setTiming({ ttftMs: first - started });
        }
        if (typeof chunk.usage?.completion_tokens === 'number') completionTokens = chunk.usage.completion_tokens;
        if (chunk.svc_retrieval !== undefined) setRetrieval(chunk.svc_retrieval);
      }, controller.signal);
    } catch (e) {
      if (!controller.signal.aborted) {
        failed = true;
        setError((e as Error).message);
      }
    } finally {
      const tokens = completionTokens ?? chunks;
      // As bench/inference measures it: tokens after the first, over first → last content chunk.
      const decodeSeconds = first === undefined ? 0 : (last - first) / 1000;
      setTiming({
        ...(first === undefined ? {} : { ttftMs: first - started }),
        completionTokens: tokens,
        totalMs: performance.now() - started,
        ...(decodeSeconds > 0 && tokens > 1 ? { tokensPerSecond: (tokens - 1) / decodeSeconds } : {}),
      });
      if (failed || text === '') {
        // A turn that failed, or was stopped before its first token, is not kept: the history
        // goes back to what it was (the next request must not carry an unanswered or half
        // answered user turn) and the prompt goes back in the box to send again.
        setHistory(history);
        setPrompt(prompt);
      } else {
        setHistory((h) => [...h, { role: 'assistant', content: text }]);
      }
      setBusy(false);
      abort.current = null;
    }
  };

  const showSnippet = (kind: SnippetKind) => {
    const messages: Message[] = prompt.trim() === '' ? history : [...history, { role: 'user', content: prompt }];
    setSnippet({ kind, text: snippetFor(kind, requestBody(messages.length > 0 ? messages : [{ role: 'user', content: 'Hello!' }])) });
    setCopied('');
  };

  const copySnippet = async () => {
    if (snippet === undefined) return;
    try {
      await navigator.clipboard.writeText(snippet.text);
      setCopied('Copied.');
    } catch {
      setCopied('The browser refused the clipboard; select the text and copy it.');
    }
  };

  return (
    <div class="chat">
      <form class="panel chat-form" onSubmit={send}>
        <div class="row">
          <label for="chat-model">Model</label>
          <select id="chat-model" value={model} onChange={(e) => setModel(e.currentTarget.value)} disabled={models === undefined || models.length === 0}>
            {models?.map((m) => <option value={m.id} key={m.id}>{m.id}</option>)}
          </select>
          <label for="chat-max-tokens">Max tokens</label>
          <input id="chat-max-tokens" type="number" min={1} max={8192} value={maxTokens} onInput={(e) => setMaxTokens(Number(e.currentTarget.value) || 1)} />
        </div>
        {models !== undefined && models.length === 0 && <p>No chat model is served.</p>}
        {spaces.length > 0 && (
          <fieldset class="row" id="chat-spaces">
            <legend>Spaces to answer from (optional)</legend>
            {spaces.map((name) => (
              <label key={name} class="choice">
                <input
                  type="checkbox"
                  value={name}
                  checked={chosenSpaces.includes(name)}
                  onChange={(e) => {
                    const on = e.currentTarget.checked;
                    setChosenSpaces((current) => (on ? [...current, name] : current.filter((n) => n !== name)));
                  }}
                /> {name}
              </label>
            ))}
          </fieldset>
        )}
        <label for="chat-system">System prompt (optional)</label>
        <input id="chat-system" type="text" value={system} onInput={(e) => setSystem(e.currentTarget.value)} />
        <label for="chat-prompt">Message</label>
        <textarea id="chat-prompt" rows={3} value={prompt} onInput={(e) => setPrompt(e.currentTarget.value)} />
        <div class="row">
          <button type="submit" id="chat-send" disabled={busy || model === ''}>Send</button>
          <button type="button" id="chat-stop" disabled={!busy} onClick={() => abort.current?.abort()}>Stop</button>
          <button type="button" disabled={busy || history.length === 0} onClick={() => { setHistory([]); setReply(''); setPoints([]); setTiming({}); setRetrieval(undefined); }}>New chat</button>
        </div>
      </form>
      {error !== undefined && <p role="alert" class="error" id="chat-error">{error}</p>}
      <section class="panel" aria-labelledby="conversation-title">
        <h2 id="conversation-title">Conversation</h2>
        <ol class="messages" id="messages">
          {history.map((m, i) => <li key={i} class={`message ${m.role}`}><span class="role">{m.role}</span> {m.content}</li>)}
          {busy && <li class="message assistant streaming"><span class="role">assistant</span> {reply}</li>}
        </ol>
        <dl class="facts" aria-live="polite">
          <div class="fact"><dt>Time to first token</dt><dd id="ttft">{timing.ttftMs === undefined ? '—' : `${Math.round(timing.ttftMs)} ms`}</dd></div>
          <div class="fact"><dt>Tokens/s</dt><dd id="tokens-per-second">{formatNumber(timing.tokensPerSecond)}</dd></div>
          <div class="fact"><dt>Completion tokens</dt><dd id="completion-tokens">{timing.completionTokens ?? '—'}</dd></div>
          <div class="fact"><dt>Total</dt><dd>{timing.totalMs === undefined ? '—' : `${Math.round(timing.totalMs)} ms`}</dd></div>
        </dl>
        {retrieval !== undefined && <Citations retrieval={retrieval} />}
        {/* Drawn from the first chunk on: an empty chart would only take room. */}
        {points.length > 1 && <StreamChart points={points} />}
      </section>
      <section class="panel" aria-labelledby="snippet-title">
        <h2 id="snippet-title">Use it from code</h2>
        <div class="row">
          <button type="button" id="copy-curl" onClick={() => showSnippet('curl')}>As curl</button>
          <button type="button" id="copy-openai-js" onClick={() => showSnippet('openai-js')}>As openai (JavaScript)</button>
          <button type="button" id="copy-openai-python" onClick={() => showSnippet('openai-python')}>As openai (Python)</button>
        </div>
        {snippet !== undefined && (
          <>
            <pre id="snippet" tabIndex={0}><code>{snippet.text}</code></pre>
            <button type="button" id="copy-snippet" onClick={copySnippet}>Copy</button> <span id="copy-status" role="status">{copied}</span>
          </>
        )}
      </section>
    </div>
  );
}

/** The passages the last answer was given, as the API cited them: numbered as the model saw them. */
function Citations({ retrieval }: { retrieval: Retrieval }) {
  return (
    <section aria-labelledby="citations-title" id="citations" data-status={retrieval.status}>
      <h3 id="citations-title">Sources <span class="muted">{retrieval.spaces.join(', ')} · {retrieval.mode}</span></h3>
      {retrieval.status === 'no_results' && <p>The search ran and matched nothing: the answer has no sources.</p>}
      {retrieval.status === 'retrieval_unavailable' && (
        <p role="alert" class="error">Retrieval was unavailable ({retrieval.error?.message ?? 'no reason given'}): the answer was generated without sources.</p>
      )}
      {retrieval.citations.length > 0 && (
        <ol class="results citations">
          {retrieval.citations.map((c) => (
            <li key={c.chunk_id} value={c.index} data-chunk={c.chunk_id}>
              <div><strong>{c.title ?? c.source ?? 'untitled'}</strong>{c.source !== null && c.title !== null && <span class="muted"> · {c.source}</span>} <span class="muted">({c.space})</span></div>
              {passagePlace(c) !== '' && <div class="place">{passagePlace(c)}</div>}
              <p class="snippet"><HighlightedSnippet text={c.snippet} marks={c.snippet_marks} /></p>
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}
