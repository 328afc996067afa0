/**
 * What reaches the daemon below the routes: malformed HTTP, slow clients, Host and OPTIONS
 * handling and body charsets, sent on raw sockets (fetch would refuse to send most of it) to
 * every address the daemon listens on, since each is its own http.Server.
 */
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { startDaemon, type DaemonProcess } from '../helpers/daemon-process.ts';

interface RawResponse {
  status: number;
  headers: Map<string, string>;
  body: string;
  /** How the exchange ended: the response was complete, or the server closed/reset first. */
  ended: 'complete' | 'closed' | 'reset';
}

/**
 * Writes `data` on a fresh connection and reads one response: until Content-Length bytes of
 * body have arrived, or the server closes. A response that never comes fails the test after
 * 10 s instead of hanging it.
 */
function exchange(url: string, data: string | Buffer | (string | Buffer)[], options: { readAfterMs?: number } = {}): Promise<RawResponse> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname.replace(/^\[|\]$/g, ''), port: Number(port) });
    let received = Buffer.alloc(0);
    let settled = false;
    const finish = (ended: RawResponse['ended']) => {
      if (settled) return;
      const text = received.toString('latin1');
      const split = text.indexOf('\r\n\r\n');
      if (split < 0) {
        if (ended === 'complete') return;
        settled = true;
        clearTimeout(timer);
        socket.destroy();
        reject(new Error(`connection ${ended} before a complete response head: ${JSON.stringify(text.slice(0, 200))}`));
        return;
      }
      const [statusLine, ...headerLines] = text.slice(0, split).split('\r\n');
      const headers = new Map(headerLines.map((line) => {
        const colon = line.indexOf(':');
        return [line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim()] as const;
      }));
      const bodyBytes = received.subarray(Buffer.byteLength(text.slice(0, split + 4), 'latin1'));
      const length = headers.get('content-length');
      const status = Number(statusLine!.split(' ')[1]);
      const bodyless = status === 204 || status === 304 || (status >= 100 && status < 200);
      if (ended === 'complete' && !bodyless && (length === undefined || bodyBytes.length < Number(length))) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve({ status, headers, body: bodyBytes.toString('utf8'), ended });
    };
    const timer = setTimeout(() => {
      settled = true;
      socket.destroy();
      reject(new Error(`no complete response in 10 s: ${JSON.stringify(received.toString('latin1').slice(0, 200))}`));
    }, 10_000);
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      finish('complete');
    });
    socket.on('error', () => finish('reset'));
    socket.on('close', () => finish('closed'));
    for (const part of Array.isArray(data) ? data : [data]) socket.write(part);
    if (options.readAfterMs !== undefined) {
      socket.pause();
      setTimeout(() => socket.resume(), options.readAfterMs);
    }
  });
}

interface Envelope {
  error: { message: string; type: string; param: string | null; code: string };
}

/** Asserts the response is the JSON error envelope with `status` and `code`, and returns it. */
function assertEnvelope(res: RawResponse, status: number, code: string, label: string): Envelope['error'] {
  assert.equal(res.status, status, `${label}: ${res.status} ${res.body}`);
  assert.match(res.headers.get('content-type') ?? '', /^application\/json/, label);
  assert.equal(Number(res.headers.get('content-length')), Buffer.byteLength(res.body), `${label}: Content-Length`);
  const body = JSON.parse(res.body) as Envelope;
  assert.equal(typeof body.error.message, 'string', label);
  assert.equal(typeof body.error.type, 'string', label);
  assert.equal(body.error.code, code, `${label}: ${body.error.message}`);
  return body.error;
}

const get = (path: string, headers: string[]) => `GET ${path} HTTP/1.1\r\n${headers.map((h) => `${h}\r\n`).join('')}Connection: close\r\n\r\n`;

function post(path: string, contentType: string, body: string): string {
  return `POST ${path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: ${contentType}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`;
}

const solveBody = JSON.stringify({
  solver: 'grover',
  problem: { type: 'pattern_search', dataset: ['a', 'b', 'c', 'needle', 'e', 'f', 'g', 'h'].join('\n'), target: { pattern: 'needle', min_confidence: 0.5 }, search_space_size: 8 },
  seed: 1,
});

let daemon: DaemonProcess;
before(async () => {
  // A short request timeout so the 408 test waits half a second, not 30.
  daemon = await startDaemon({ withModel: false, args: ['--request-timeout', '500ms'] });
  assert.equal(daemon.urls.length, 2, `expected 127.0.0.1 and [::1]: ${daemon.urls.join(', ')}`);
});
after(async () => { assert.equal(await daemon.stop(), 0); });

describe('errors from the HTTP parser are the envelope, on every listening server', () => {
  test('unknown method, Content-Length with Transfer-Encoding, bad header token, TLS on the plain port: 400', async () => {
    for (const url of daemon.urls) {
      const method = assertEnvelope(await exchange(url, 'FOO /health HTTP/1.1\r\nHost: localhost\r\n\r\n'), 400, 'invalid_http_request', `${url} FOO`);
      assert.match(method.message, /method/);
      const both = await exchange(url, 'POST /api/solve HTTP/1.1\r\nHost: localhost\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n');
      assert.match(assertEnvelope(both, 400, 'invalid_http_request', `${url} CL+TE`).message, /Content-Length/);
      assert.equal(both.headers.get('connection'), 'close');
      assertEnvelope(await exchange(url, 'GET /health HTTP/1.1\r\nHost: localhost\r\nBad Header: x\r\n\r\n'), 400, 'invalid_http_request', `${url} header token`);
      const tls = await exchange(url, Buffer.from([0x16, 0x03, 0x01, 0x00, 0xa5, 0x01, 0x00, 0x00, 0xa1, 0x03, 0x03]));
      assert.match(assertEnvelope(tls, 400, 'invalid_http_request', `${url} TLS`).message, /http:\/\//);
    }
  });

  test('headers over the limit: 431, and the answer survives a client still sending', async () => {
    for (const url of daemon.urls) {
      assertEnvelope(await exchange(url, `GET /health HTTP/1.1\r\nHost: localhost\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`), 431, 'headers_too_large', `${url} 20 KB`);
      // 1 MiB of header bytes: the parser gives up after 16 KiB while the rest is still
      // arriving. A server that closed then would reset the connection, and a client that reads
      // its socket only after that (here 300 ms later) would lose the 431.
      const chunks = [`GET /health HTTP/1.1\r\nHost: localhost\r\nX-Big: `, ...Array.from({ length: 16 }, () => 'a'.repeat(65_536))];
      const res = await exchange(url, chunks, { readAfterMs: 300 });
      assertEnvelope(res, 431, 'headers_too_large', `${url} 1 MiB`);
      assert.equal(res.headers.get('connection'), 'close');
    }
  });

  test('a request not received in full within --request-timeout: 408', async () => {
    for (const url of daemon.urls) {
      assertEnvelope(await exchange(url, 'GET /health HTTP/1.1\r\nHost: localhost\r\n'), 408, 'request_timeout', `${url} headers`);
      // The head arrived and a route is waiting for the body.
      const body = await exchange(url, 'POST /api/solve HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"solver"');
      assertEnvelope(body, 408, 'request_timeout', `${url} body`);
      assert.equal(body.headers.get('connection'), 'close');
    }
    // The daemon carries on.
    for (const url of daemon.urls) assert.equal((await fetch(`${url}/health`)).status, 200);
  });

  test('Expect other than 100-continue: 417; CONNECT: 405', async () => {
    for (const url of daemon.urls) {
      assertEnvelope(await exchange(url, 'POST /api/solve HTTP/1.1\r\nHost: localhost\r\nExpect: the-unexpected\r\nContent-Length: 2\r\n\r\n{}'), 417, 'expectation_failed', `${url} Expect`);
      const proxy = await exchange(url, 'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n');
      assertEnvelope(proxy, 405, 'method_not_allowed', `${url} CONNECT`);
      assert.match(proxy.headers.get('allow') ?? '', /GET/);
    }
  });
});

describe('Host', () => {
  test('an HTTP/1.1 request without Host: 400; HTTP/1.0 may omit it', async () => {
    for (const url of daemon.urls) {
      assertEnvelope(await exchange(url, get('/health', [])), 400, 'invalid_host_header', `${url} no Host`);
      const old = await exchange(url, 'GET /health HTTP/1.0\r\n\r\n');
      assert.equal(old.status, 200, `${url} HTTP/1.0: ${old.body}`);
    }
  });

  test('two Host headers: 400, whichever comes first and even when they agree', async () => {
    for (const url of daemon.urls) {
      for (const hosts of [['localhost', 'evil.example'], ['evil.example', 'localhost'], ['localhost', 'localhost']]) {
        const error = assertEnvelope(await exchange(url, get('/health', hosts.map((h, i) => `${i === 0 ? 'Host' : 'host'}: ${h}`))), 400, 'invalid_host_header', `${url} ${hosts.join(' + ')}`);
        assert.match(error.message, /2 Host headers/);
      }
    }
  });

  test('malformed Host values: 400; well-formed but not loopback: 403', async () => {
    const port = daemon.port;
    const malformed = ['127.0.0.1:80@evil.com', `localhost:${port} evil.com`, '[::1]x', 'localhost:99999', 'localhost:0', 'localhost:', 'localhost:8o', '[::1', '[evil.com]', 'user@localhost', 'local host', ''];
    const foreign = ['evil.example', `evil.example:${port}`, '10.0.0.1', '[2001:db8::1]:80', '%6cocalhost'];
    for (const url of daemon.urls) {
      for (const host of malformed) assertEnvelope(await exchange(url, get('/health', [`Host: ${host}`])), 400, 'invalid_host_header', `${url} Host '${host}'`);
      for (const host of foreign) assertEnvelope(await exchange(url, get('/health', [`Host: ${host}`])), 403, 'forbidden_host', `${url} Host '${host}'`);
      for (const host of ['localhost', `localhost:${port}`, `127.0.0.1:${port}`, `[::1]:${port}`, 'LOCALHOST.', 'app.localhost:1']) {
        const res = await exchange(url, get('/health', [`Host: ${host}`]));
        assert.equal(res.status, 200, `${url} Host '${host}': ${res.body}`);
      }
    }
  });

  test('an absolute-form target names the host it is for: it must be loopback as well', async () => {
    for (const url of daemon.urls) {
      assertEnvelope(await exchange(url, 'GET http://evil.example/health HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n'), 403, 'forbidden_host', `${url} absolute evil`);
      assertEnvelope(await exchange(url, 'GET http://localhost@evil.example/health HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n'), 400, 'invalid_host_header', `${url} absolute userinfo`);
      const local = await exchange(url, `GET http://localhost:${daemon.port}/health HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n`);
      assert.equal(local.status, 200, `${url} absolute loopback: ${local.body}`);
    }
  });

  test('messages quote a long Host or Origin only in part', async () => {
    const long = `evil${'x'.repeat(5000)}.example`;
    for (const header of [`Host: ${long}`, `Host: localhost:${'1'.repeat(5000)}`, `Origin: http://${long}`]) {
      const host = header.startsWith('Origin') ? ['Host: localhost', header] : [header];
      const res = await exchange(daemon.url, get('/health', host));
      const error = assertEnvelope(res, header.startsWith('Host: localhost') ? 400 : 403, header.startsWith('Host: localhost') ? 'invalid_host_header' : 'forbidden_host', header.slice(0, 30));
      assert.ok(error.message.length < 300, `${error.message.length} characters`);
      assert.match(error.message, /…/);
    }
  });
});

describe('OPTIONS', () => {
  test('without preflight headers: 204 with the methods the path allows; unknown path 404; OPTIONS * lists all', async () => {
    for (const url of daemon.urls) {
      const health = await exchange(url, `OPTIONS /health HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n`);
      assert.equal(health.status, 204, `${url} /health: ${health.body}`);
      assert.deepEqual(health.headers.get('allow')?.split(', '), ['GET', 'HEAD', 'OPTIONS']);
      const solve = await exchange(url, `OPTIONS /api/solve?x=1 HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n`);
      assert.deepEqual(solve.headers.get('allow')?.split(', '), ['POST', 'OPTIONS']);
      // An Origin alone is no preflight either (that needs Access-Control-Request-Method).
      const origin = await exchange(url, `OPTIONS /v1/models HTTP/1.1\r\nHost: localhost\r\nOrigin: http://localhost:5173\r\nConnection: close\r\n\r\n`);
      assert.equal(origin.status, 204);
      assert.deepEqual(origin.headers.get('allow')?.split(', '), ['GET', 'HEAD', 'OPTIONS']);
      assertEnvelope(await exchange(url, `OPTIONS /no/such/path HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n`), 404, 'unknown_route', `${url} OPTIONS unknown`);
      const star = await exchange(url, `OPTIONS * HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n`);
      assert.equal(star.status, 204);
      assert.deepEqual(star.headers.get('allow')?.split(', '), ['GET', 'HEAD', 'POST', 'DELETE', 'PATCH', 'PUT', 'OPTIONS']);
    }
  });

  test('a CORS preflight is still answered by CORS', async () => {
    const res = await exchange(daemon.url, 'OPTIONS /v1/chat/completions HTTP/1.1\r\nHost: localhost\r\nOrigin: http://localhost:5173\r\nAccess-Control-Request-Method: POST\r\nConnection: close\r\n\r\n');
    assert.equal(res.status, 204);
    assert.equal(res.headers.get('access-control-allow-origin'), 'http://localhost:5173');
    assert.equal(res.headers.has('allow'), false);
  });
});

describe('body charset', () => {
  test('a body declared in a charset other than UTF-8: 415 before it is read, on every body route', async () => {
    for (const url of daemon.urls) {
      for (const contentType of ['application/json; charset=utf-16', 'application/json; charset="UTF-16LE"', 'application/json;charset=latin1', 'application/json; foo=bar; CHARSET=iso-8859-1', 'application/json; charset=utf-8; charset=utf-16', 'application/json; charset=utf-8; a="x;y"; Charset=utf-8']) {
        for (const path of ['/api/solve', '/api/solve/batch', '/v1/chat/completions', '/v1/completions', '/v1/embeddings']) {
          const error = assertEnvelope(await exchange(url, post(path, contentType, solveBody)), 415, 'unsupported_charset', `${url}${path} ${contentType}`);
          assert.match(error.message, /UTF-8/);
        }
      }
      // Refused from the head alone: the 415 comes although the announced body never arrives.
      const unsent = 'POST /api/solve HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json; charset=utf-16\r\nContent-Length: 1000\r\nConnection: close\r\n\r\n';
      assertEnvelope(await exchange(url, unsent), 415, 'unsupported_charset', `${url} unsent body`);
      // An unknown path stays a 404 whatever the charset.
      assertEnvelope(await exchange(url, post('/no/such/path', 'application/json; charset=utf-16', '{}')), 404, 'unknown_route', `${url} unknown path`);
    }
  });

  test('UTF-8, however it is spelled, or no charset, is parsed', async () => {
    for (const url of daemon.urls) {
      for (const contentType of ['application/json', 'application/json; charset=UTF-8', 'application/json; charset="utf-8"', 'application/json;charset=utf8', 'Application/JSON; Charset=Utf-8', 'application/json; a="x;charset=utf-16"; charset=utf-8']) {
        const res = await exchange(url, post('/api/solve', contentType, solveBody));
        assert.equal(res.status, 200, `${url} ${contentType}: ${res.body}`);
        assert.equal((JSON.parse(res.body) as { solution: { method: string } }).solution.method, 'grover');
      }
    }
  });
});
