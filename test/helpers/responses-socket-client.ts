/**
 * A WebSocket client for `/v1/responses` (Open Responses' WebSocket mode) on the `ws` package,
 * which can send the headers a browser would (Origin). `turn` sends one message and collects
 * what comes back up to the turn's one terminal message.
 */
import WebSocket from 'ws';

export type SocketEvent = Record<string, unknown> & { type: string };

const TERMINAL: ReadonlySet<string> = new Set(['response.completed', 'response.incomplete', 'response.failed', 'error']);

export class ResponsesSocketClient {
  readonly socket: WebSocket;
  readonly #received: SocketEvent[] = [];
  #waiter: (() => void) | undefined;
  readonly closed: Promise<{ code: number; reason: string }>;

  private constructor(socket: WebSocket) {
    this.socket = socket;
    socket.on('message', (data) => {
      this.#received.push(JSON.parse(data.toString()) as SocketEvent);
      this.#waiter?.();
    });
    this.closed = new Promise((resolve) => socket.once('close', (code, reason) => {
      this.#waiter?.();
      resolve({ code, reason: reason.toString() });
    }));
  }

  /** Opens a connection to `${baseUrl}/v1/responses`; `headers` are sent with the upgrade. */
  static async open(baseUrl: string, headers: Record<string, string> = {}): Promise<ResponsesSocketClient> {
    const socket = new WebSocket(`${baseUrl.replace(/^http/, 'ws')}/v1/responses`, { headers });
    await new Promise<void>((resolve, reject) => {
      socket.once('open', resolve);
      socket.once('error', reject);
    });
    return new ResponsesSocketClient(socket);
  }

  /** The next message, or undefined once the connection closed with none left. */
  async next(timeoutMs = 30_000): Promise<SocketEvent | undefined> {
    const deadline = Date.now() + timeoutMs;
    while (this.#received.length === 0) {
      if (this.socket.readyState === WebSocket.CLOSED) return undefined;
      if (Date.now() > deadline) throw new Error('no WebSocket message in time');
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.max(1, deadline - Date.now()));
        this.#waiter = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.#waiter = undefined;
    }
    return this.#received.shift();
  }

  /** Messages up to and including the next terminal one (a response's last event, or an error). */
  async untilTerminal(): Promise<SocketEvent[]> {
    const events: SocketEvent[] = [];
    for (;;) {
      const event = await this.next();
      if (event === undefined) throw new Error(`the connection closed before a terminal message; got ${events.map((e) => e.type).join(', ')}`);
      events.push(event);
      if (TERMINAL.has(event.type)) return events;
    }
  }

  /** Sends `message` (an object is sent as JSON text) and returns the turn's messages. */
  async turn(message: object | string): Promise<SocketEvent[]> {
    this.socket.send(typeof message === 'string' ? message : JSON.stringify(message));
    return this.untilTerminal();
  }

  close(): void {
    this.socket.close();
  }
}

/** The upgrade's HTTP answer when the server refuses it: status and body. */
export function refusedUpgrade(url: string, headers: Record<string, string>): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(`${url.replace(/^http/, 'ws')}/v1/responses`, { headers });
    socket.once('open', () => {
      socket.close();
      reject(new Error('the upgrade was accepted'));
    });
    socket.once('unexpected-response', (_request, response) => {
      let body = '';
      response.on('data', (chunk: Buffer) => { body += chunk.toString(); });
      response.once('end', () => resolve({ status: response.statusCode ?? 0, body }));
    });
    socket.once('error', () => {});
  });
}
