/**
 * The MCP options of `svc serve` through the real command definition: defaults, flags, SVC_*
 * variables and config-file keys, and the checks that refuse a bad value.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { ConfigError } from '../../src/shared/config-values.ts';
import { loadServeArgs as load } from '../helpers/serve-config.ts';

describe('svc serve MCP options', () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-mcp-config-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('defaults to the daemon\'s ports, sessions, at most 100, closed after 30 idle minutes', async () => {
    assert.deepEqual((await load(['--data-dir', dir])).mcp, { port: undefined, stateless: false, maxSessions: 100, sessionIdleMs: 30 * 60_000 });
  });

  it('takes flags, SVC_* variables and config-file keys', async () => {
    assert.deepEqual((await load(['--data-dir', dir, '--mcp-port', '11436', '--mcp-stateless', '--mcp-max-sessions', '3', '--mcp-session-idle', '90s'])).mcp, { port: 11436, stateless: true, maxSessions: 3, sessionIdleMs: 90_000 });
    assert.deepEqual((await load(['--data-dir', dir], { SVC_MCP_PORT: '0', SVC_MCP_STATELESS: '1', SVC_MCP_MAX_SESSIONS: '7', SVC_MCP_SESSION_IDLE: '2m' })).mcp, { port: 0, stateless: true, maxSessions: 7, sessionIdleMs: 120_000 });
    const file = join(dir, 'mcp.toml');
    writeFileSync(file, 'mcp_port = 11437\nmcp_stateless = true\nmcp_max_sessions = 5\nmcp_session_idle = "1h"\n');
    assert.deepEqual((await load(['--data-dir', dir, '--config', file])).mcp, { port: 11437, stateless: true, maxSessions: 5, sessionIdleMs: 3_600_000 });
  });

  it('refuses a port the daemon serves, a cap below 1 and an idle time under a second, naming the flag', async () => {
    await assert.rejects(load(['--data-dir', dir, '--port', '8000', '--mcp-port', '8000']), (e: unknown) => e instanceof ConfigError && /--mcp-port 8000/.test(e.message));
    await assert.rejects(load(['--data-dir', dir, '--mcp-port', '70000']), /--mcp-port/);
    await assert.rejects(load(['--data-dir', dir, '--mcp-max-sessions', '0']), (e: unknown) => e instanceof ConfigError && /--mcp-max-sessions/.test(e.message));
    await assert.rejects(load(['--data-dir', dir, '--mcp-session-idle', '10ms']), (e: unknown) => e instanceof ConfigError && /--mcp-session-idle/.test(e.message));
    await assert.rejects(load(['--data-dir', dir, '--mcp-session-idle', 'soon']), /--mcp-session-idle/);
  });
});
