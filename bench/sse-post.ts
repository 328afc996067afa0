import { request, type Agent } from 'node:http';

/** A kept-alive socket the server had closed: nothing was sent back, so the request can be sent again. */
export class StaleSocketError extends Error {}

/**
 * POSTs a JSON body and reads the answer as an OpenAI-style SSE stream over node:http (the
 * lightest client, so the client's own cost stays out of the figures, and the same code for
 * every server compared). `onChunk` gets each `data:` event's JSON (`[DONE]` skipped); `onRead`
 * runs after each socket read with the number of events it carried. A non-200 answer rejects
 * with its body.
 */
export function postSse(
  url: string,
  body: string,
  agent: Agent,
  onChunk: (chunk: unknown) => void,
  onRead?: (events: number) => void,
): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = request(url, {
      method: 'POST',
      agent,
      headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
    }, (res) => {
      if (res.statusCode !== 200) {
        let text = '';
        res.on('data', (d: Buffer) => { text += d.toString(); });
        res.on('end', () => reject(new Error(`HTTP ${res.statusCode}: ${text}`)));
        return;
      }
      res.setEncoding('utf8');
      let buffer = '';
      res.on('data', (data: string) => {
        buffer += data;
        let events = 0;
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const event = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          if (!event.startsWith('data: ') || event === 'data: [DONE]') continue;
          events++;
          try {
            onChunk(JSON.parse(event.slice(6)));
          } catch (error) {
            reject(error instanceof Error ? error : new Error(String(error)));
          }
        }
        onRead?.(events);
      });
      res.on('end', () => resolve());
      res.on('error', reject);
    });
    // llama-server closes idle connections: a reused socket can fail before any answer.
    req.on('error', (error: NodeJS.ErrnoException) => {
      reject(req.reusedSocket && error.code === 'ECONNRESET' ? new StaleSocketError(error.message) : error);
    });
    req.end(body);
  });
}
