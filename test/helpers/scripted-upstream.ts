/**
 * A tiny OpenAI-protocol server on loopback whose answers a test scripts: SSE events exactly
 * as given (so a test can send what real upstreams send, quirks included), JSON, error
 * statuses, or nothing at all. It records every request and whether the client went away.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { OpenAIUpstream } from '../../src/inference/openai-upstream.ts';

export interface RecordedRequest {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: unknown;
  /** Resolves when the client closed the connection before the answer was complete. */
  aborted: Promise<void>;
}

export type Handler = (request: RecordedRequest, response: ServerResponse) => void | Promise<void>;

export interface ScriptedUpstream {
  /** `http://127.0.0.1:PORT/v1` */
  baseUrl: string;
  requests: RecordedRequest[];
  /** Replaces the handler for the next requests. */
  handle(handler: Handler): void;
  close(): Promise<void>;
}

export async function startScriptedUpstream(handler: Handler = (_req, res) => void res.end()): Promise<ScriptedUpstream> {
  let current = handler;
  const requests: RecordedRequest[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      let body: unknown = text;
      try {
        body = text === '' ? undefined : JSON.parse(text);
      } catch {
        // Kept as text.
      }
      const aborted = new Promise<void>((resolve) => res.once('close', () => {
        if (!res.writableFinished) resolve();
      }));
      const recorded = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body, aborted };
      requests.push(recorded);
      void Promise.resolve(current(recorded, res)).catch(() => res.destroy());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    handle(next) {
      current = next;
    },
    close() {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

/** Writes `events` as an SSE body (`data: …` each, objects as JSON) and ends it. */
export function sse(events: readonly (string | object)[], options: { status?: number; end?: boolean; lineEnding?: string } = {}): Handler {
  return (_req, res) => {
    res.writeHead(options.status ?? 200, { 'content-type': 'text/event-stream' });
    const nl = options.lineEnding ?? '\n';
    for (const event of events) {
      const text = typeof event === 'string' ? event : `data: ${JSON.stringify(event)}`;
      res.write(`${text}${nl}${nl}`);
    }
    if (options.end !== false) res.end();
  };
}

/** Answers with a status and a JSON (or text) body. */
export function answer(status: number, body: unknown, headers: Record<string, string> = {}): Handler {
  return (_req, res) => {
    const text = typeof body === 'string' ? body : JSON.stringify(body);
    res.writeHead(status, { 'content-type': typeof body === 'string' ? 'text/plain' : 'application/json', ...headers });
    res.end(text);
  };
}

/** A chat chunk with a content delta (and the fields real servers send around it). */
export function contentChunk(content: string, extra: Record<string, unknown> = {}): object {
  return { id: 'chatcmpl-x', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { content }, finish_reason: null }], ...extra };
}

export function finishChunk(reason: string, extra: Record<string, unknown> = {}): object {
  return { id: 'chatcmpl-x', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: {}, finish_reason: reason }], ...extra };
}

/** A scripted server and svc's own client for it (short timeouts), for tests of the upstream client itself. */
export async function startUpstreamClient(): Promise<{ server: ScriptedUpstream; upstream: OpenAIUpstream }> {
  const server = await startScriptedUpstream();
  return { server, upstream: new OpenAIUpstream({ name: 'up', baseUrl: server.baseUrl, kind: 'local', connectTimeoutMs: 2000, firstByteTimeoutMs: 2000 }) };
}
