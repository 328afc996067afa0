import { isLoopbackHostname } from '../shared/loopback-hostname.ts';
import { UserError } from '../shared/user-error.ts';
import { DaemonClient, DEFAULT_DAEMON_URL, developerKeyHeaders } from './daemon-client.ts';

/** The daemon `svc mcp` calls, and what goes with each call. */
export interface McpDaemonTarget {
  base: string;
  headers: Record<string, string>;
}

/**
 * Where the stdio bridge sends tool input: the daemon on this machine. Tool input is local
 * context (vault contents, files), so an address off the machine is refused (exit 2) unless
 * `--allow-remote-daemon` says the user means it (a daemon of theirs over a tunnel, say).
 * `SVC_API_KEY` is the developer key sent with each call, for a daemon that requires one.
 */
export function mcpDaemonTarget(options: { url?: string | undefined; allowRemoteDaemon?: boolean | undefined }, env: NodeJS.ProcessEnv): McpDaemonTarget {
  let base: string;
  try {
    base = new DaemonClient(options.url ?? DEFAULT_DAEMON_URL).base;
  } catch (error) {
    throw new UserError((error as Error).message, { exitCode: 2 });
  }
  const host = new URL(base).hostname;
  if (!isLoopbackHostname(host) && options.allowRemoteDaemon !== true) {
    throw new UserError(
      `svc mcp: ${base} is not on this machine, and tool input (space contents, files) stays on it. ` +
      'Point SVC_URL at the local daemon (http://127.0.0.1:11435), or pass --allow-remote-daemon (SVC_MCP_ALLOW_REMOTE_DAEMON=1) if that daemon is yours.',
      { exitCode: 2 },
    );
  }
  return { base, headers: developerKeyHeaders(env) };
}
