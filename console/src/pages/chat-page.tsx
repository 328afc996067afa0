import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiCallError, chatModels, fetchModels, fetchSpaces, postStream, type ModelInfo } from '../api-client.ts';
import { ChatTurnView, type ChatTurn } from '../chat-turn.tsx';
import { formatNumber } from '../format.ts';
import { HighlightedSnippet, passagePlace } from '../highlighted-snippet.tsx';
import type { RetrievalExtension } from '../../../src/spaces/retrieval-extension.ts';
import { curlSnippet, openaiJsSnippet, openaiPythonSnippet } from '../request-snippets.ts';
import { StreamChart, type StreamPoint } from '../stream-chart.tsx';

/** The API's message: a turn without the page's own marker. */
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
  choices?: { delta?: { content?: string | null }; finish_reason?: string | null }[];
  usage?: { completion_tokens?: number } | null;
  svc_retrieval?: Retrieval;
}

type SnippetKind = 'curl' | 'openai-js' | 'openai-python';

function snippetFor(kind: SnippetKind, body: object): string {
  const origin = location.origin;
  if (kind === 'curl') return curlSnippet(origin, body);
  return kind === 'openai-js' ? openaiJsSnippet(origin, body) : openaiPythonSnippet(origin, body);
}

/** Without a context length from /v1/models (an upstream model), the field's old ceiling. */
const DEFAULT_MAX_TOKENS_CEILING = 8192;

/**
 * A failed request in plain words. fetch() rejects with a bare TypeError ("Failed to fetch")
 * when nothing answers; that says nothing to a person, so it is named for what it means.
 */
function plainError(e: unknown): string {
  // api-client.ts reports an unreachable daemon as ApiCallError 'daemon_unreachable'; a bare
  // TypeError is the same thing from a path that does not go through it.
  const unreachable = e instanceof ApiCallError ? e.code === 'daemon_unreachable' : e instanceof TypeError;
  if (unreachable) {
    return `The daemon at ${location.origin} did not answer: it may be stopped or restarting. Start it (svc serve) and send again; your message is kept in the box.`;
  }
  if (e instanceof ApiCallError) return e.message;
  return e instanceof Error ? e.message : String(e);
}

/** Enter sends, Shift+Enter is a new line; a key that ends an IME composition never sends. */
function sendsOnEnter(event: KeyboardEvent): boolean {
  return event.key === 'Enter' && !event.shiftKey && !event.isComposing && event.keyCode !== 229;
}

export function ChatPage() {
  const [models, setModels] = useState<ModelInfo[] | undefined>();
  const [model, setModel] = useState('');
  const [system, setSystem] = useState('');
  const [prompt, setPrompt] = useState('');
  const [maxTokens, setMaxTokens] = useState(256);
  const [turns, setTurns] = useState<ChatTurn[]>([]);
  const [reply, setReply] = useState('');
  const [points, setPoints] = useState<StreamPoint[]>([]);
  const [timing, setTiming] = useState<Timing>({});
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | undefined>();
  const [snippetKind, setSnippetKind] = useState<SnippetKind | undefined>();
  const [copied, setCopied] = useState('');
  const [spaces, setSpaces] = useState<string[]>([]);
  const [chosenSpaces, setChosenSpaces] = useState<string[]>([]);
  const [retrieval, setRetrieval] = useState<Retrieval | undefined>();
  const abort = useRef<AbortController | null>(null);
  const messagesBox = useRef<HTMLOListElement>(null);

  useEffect(() => {
    const controller = new AbortController();
    fetchModels(controller.signal)
      .then((list) => {
        const usable = chatModels(list);
        setModels(usable);
        setModel((current) => current || (usable[0]?.id ?? ''));
      })
      .catch((e: unknown) => { if (!controller.signal.aborted) setError(plainError(e)); });
    // Spaces are optional here: with none (or none listed), the page is a plain chat.
    fetchSpaces(controller.signal).then((list) => setSpaces(list.data.map((s) => s.name)), () => setSpaces([]));
    return () => controller.abort();
  }, []);
  useEffect(() => () => abort.current?.abort(), []);

  // Max tokens cannot exceed the model's context (its `max_context_length` in /v1/models).
  const contextLength = models?.find((m) => m.id === model)?.max_context_length ?? null;
  const ceiling = contextLength ?? DEFAULT_MAX_TOKENS_CEILING;
  useEffect(() => setMaxTokens((current) => Math.min(current, ceiling)), [ceiling]);

  // The newest turn stays in view, as in the chat tools people know.
  useEffect(() => {
    const box = messagesBox.current;
    if (box !== null) box.scrollTop = box.scrollHeight;
  }, [turns, reply]);

  const requestBody = (messages: readonly ChatTurn[]) => ({
    model,
    messages: [...(system.trim() === '' ? [] : [{ role: 'system', content: system }]), ...messages.map((m): Message => ({ role: m.role, content: m.content }))],
    max_tokens: Math.min(maxTokens, ceiling),
    stream: true,
    stream_options: { include_usage: true },
    ...(chosenSpaces.length === 0 ? {} : { spaces: chosenSpaces }),
  });

  /**
   * Streams the reply to `messages` (which end with a user turn). A turn that fails, or is stopped
   * before its first token, is not kept: the conversation goes back to `before` (the next request
   * must not carry an unanswered user turn) and `restorePrompt` goes back in the box.
   */
  const ask = async (messages: ChatTurn[], before: ChatTurn[], restorePrompt: string) => {
    const body = requestBody(messages);
    const controller = new AbortController();
    abort.current = controller;
    setBusy(true);
    setError(undefined);
    setReply('');
    setPoints([]);
    setTiming({});
    setRetrieval(undefined);
    setTurns(messages);
    const started = performance.now();
    let first: number | undefined;
    let last = started;
    let text = '';
    let chunks = 0;
    let finishReason: string | undefined;
    let completionTokens: number | undefined;
    const collected: StreamPoint[] = [{ ms: 0, chunks: 0 }];
    let failed = false;
    try {
      await postStream('/v1/chat/completions', body, (data) => {
        const chunk = data as ChatChunk;
        const choice = chunk.choices?.[0];
        const delta = choice?.delta?.content;
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
        if (typeof choice?.finish_reason === 'string') finishReason = choice.finish_reason;
        if (typeof chunk.usage?.completion_tokens === 'number') completionTokens = chunk.usage.completion_tokens;
        if (chunk.svc_retrieval !== undefined) setRetrieval(chunk.svc_retrieval);
      }, controller.signal);
    } catch (e) {
      if (!controller.signal.aborted) {
        failed = true;
        setError(plainError(e));
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
        setTurns(before);
        setPrompt(restorePrompt);
      } else {
        const finish = controller.signal.aborted ? 'stopped' : finishReason === 'length' ? 'length' : undefined;
        setTurns([...messages, { role: 'assistant', content: text, ...(finish === undefined ? {} : { finish }) }]);
      }
      setReply('');
      setBusy(false);
      abort.current = null;
    }
  };

  const send = (event: Event) => {
    event.preventDefault();
    if (busy || model === '' || prompt.trim() === '') return;
    const text = prompt;
    setPrompt('');
    void ask([...turns, { role: 'user', content: text }], turns, text);
  };

  /** Asks again for the reply at `index`: the turns after it go, as in the tools people know. */
  const regenerate = (index: number) => {
    if (busy || model === '') return;
    void ask(turns.slice(0, index), turns, prompt);
  };

  // The snippet follows the whole conversation as it stands, and the message being written.
  const snippetTurns: ChatTurn[] = prompt.trim() === '' ? turns : [...turns, { role: 'user', content: prompt }];
  const snippet = snippetKind === undefined ? undefined : snippetFor(snippetKind, requestBody(snippetTurns.length > 0 ? snippetTurns : [{ role: 'user', content: 'Hello!' }]));

  const copySnippet = async () => {
    if (snippet === undefined) return;
    try {
      await navigator.clipboard.writeText(snippet);
      setCopied('Copied.');
    } catch {
      setCopied('The browser refused the clipboard; select the text and copy it.');
    }
  };

  return (
    <div class="chat">
      <section class="panel chat-settings" aria-label="Chat settings">
        <div class="row">
          <label for="chat-model">Model</label>
          <select id="chat-model" value={model} onChange={(e) => setModel(e.currentTarget.value)} disabled={models === undefined || models.length === 0}>
            {models?.map((m) => <option value={m.id} key={m.id}>{m.id}</option>)}
          </select>
          <label for="chat-max-tokens">Max tokens</label>
          <input
            id="chat-max-tokens"
            type="number"
            min={1}
            max={ceiling}
            value={maxTokens}
            aria-describedby="chat-max-tokens-hint"
            onInput={(e) => setMaxTokens(Math.max(1, Math.min(ceiling, Math.floor(Number(e.currentTarget.value)) || 1)))}
          />
          <span id="chat-max-tokens-hint" class="muted">{contextLength === null ? `up to ${ceiling}` : `up to ${contextLength}, the model's context`}</span>
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
      </section>
      <section class="panel conversation" aria-labelledby="conversation-title">
        <h2 id="conversation-title">Conversation</h2>
        <ol class="messages" id="messages" ref={messagesBox} tabIndex={0} aria-label="Messages, newest last">
          {turns.map((turn, i) => (
            <ChatTurnView key={i} turn={turn} busy={busy} {...(turn.role === 'assistant' ? { onRegenerate: () => regenerate(i) } : {})} />
          ))}
          {busy && <ChatTurnView turn={{ role: 'assistant', content: reply }} streaming />}
        </ol>
        {turns.length === 0 && !busy && <p class="muted" id="chat-empty">No messages yet. Write one below: Enter sends, Shift+Enter starts a new line.</p>}
        {error !== undefined && <p role="alert" class="error" id="chat-error">{error}</p>}
        <form class="chat-form composer" onSubmit={send}>
          <label for="chat-prompt">Message</label>
          <textarea
            id="chat-prompt"
            rows={3}
            value={prompt}
            aria-describedby="chat-prompt-hint"
            onInput={(e) => setPrompt(e.currentTarget.value)}
            onKeyDown={(e) => {
              if (!sendsOnEnter(e)) return;
              e.preventDefault();
              e.currentTarget.form?.requestSubmit();
            }}
          />
          <div class="row">
            <button type="submit" id="chat-send" disabled={busy || model === ''}>Send</button>
            <button type="button" id="chat-stop" disabled={!busy} onClick={() => abort.current?.abort()}>Stop</button>
            <button type="button" disabled={busy || turns.length === 0} onClick={() => { setTurns([]); setReply(''); setPoints([]); setTiming({}); setRetrieval(undefined); }}>New chat</button>
            <span id="chat-prompt-hint" class="muted">Enter sends · Shift+Enter for a new line</span>
          </div>
        </form>
      </section>
      <section class="panel" aria-labelledby="stats-title">
        <h2 id="stats-title">Last reply</h2>
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
        <p class="muted">The request for the whole conversation so far, as it stands: it follows each new turn.</p>
        <div class="row">
          <button type="button" id="copy-curl" aria-pressed={snippetKind === 'curl'} onClick={() => { setSnippetKind('curl'); setCopied(''); }}>As curl</button>
          <button type="button" id="copy-openai-js" aria-pressed={snippetKind === 'openai-js'} onClick={() => { setSnippetKind('openai-js'); setCopied(''); }}>As openai (JavaScript)</button>
          <button type="button" id="copy-openai-python" aria-pressed={snippetKind === 'openai-python'} onClick={() => { setSnippetKind('openai-python'); setCopied(''); }}>As openai (Python)</button>
        </div>
        {snippet !== undefined && (
          <>
            <pre id="snippet" class="snippet-box" tabIndex={0}><code>{snippet}</code></pre>
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
