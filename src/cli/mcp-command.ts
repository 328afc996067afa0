import { Option, type Command } from 'commander';
import { DEFAULT_DAEMON_URL } from './daemon-client.ts';
import { mcpDaemonTarget } from './mcp-daemon-target.ts';

/**
 * `svc mcp`: the stdio bridge for editors and agents that start MCP servers as processes
 * (Claude Desktop, VS Code, Cursor). The same tools, resources and prompt as the daemon's
 * `/mcp`, each handled by a call to the daemon at `SVC_URL` (on this machine unless
 * `--allow-remote-daemon`; `SVC_API_KEY` is sent as the developer key); a daemon that is down makes each
 * tool call an error that says so, never a crash. stdout carries JSON-RPC only; logs go to stderr.
 */
export function registerMcpCommand(program: Command): void {
  program
    .command('mcp')
    .description('the MCP server on stdio (for editors and agents): svc\'s tools, calling the daemon at SVC_URL')
    .addOption(new Option('--url <url>', `the daemon the tools call [default: ${DEFAULT_DAEMON_URL}]`).env('SVC_URL'))
    .addOption(new Option('--allow-remote-daemon', 'let SVC_URL name a daemon off this machine (tool input then leaves it) [default: loopback only]').env('SVC_MCP_ALLOW_REMOTE_DAEMON'))
    .addOption(new Option('--log-level <level>', 'log level on stderr').choices(['fatal', 'error', 'warn', 'info', 'debug', 'silent']).default('warn').env('SVC_LOG_LEVEL'))
    .action(async (options: { url?: string; allowRemoteDaemon?: boolean; logLevel: string }) => {
      const { base, headers } = mcpDaemonTarget(options, process.env);
      // Imported here so other commands start without the SDK.
      const [{ default: pino }, { serveStdio }, { buildMcpServer }, { LocalRuntimeClient }, { SpaceChanges }, { DaemonChangeRelay }] = await Promise.all([
        import('pino'),
        import('@modelcontextprotocol/server/stdio'),
        import('../mcp/mcp-server.ts'),
        import('../mcp/local-runtime-client.ts'),
        import('../mcp/space-changes.ts'),
        import('../mcp/daemon-change-relay.ts'),
      ]);
      // fd 2: stdout belongs to the protocol.
      const log = pino({ level: options.logLevel, base: { component: 'mcp' } }, pino.destination(2));
      const changes = new SpaceChanges();
      const runtime = new LocalRuntimeClient({ baseUrl: base, headers });
      const closed = new Promise<void>((resolve) => {
        // The client ends the session by closing our stdin.
        process.stdin.once('end', resolve);
        process.stdin.once('close', resolve);
      });
      // The SDK picks the era from the client's opening (2026-07-28 `server/discover` or a 2025
      // `initialize`) and pins one server from this factory to the connection.
      const server = serveStdio(() => buildMcpServer({ runtime, log, changes }), {
        onerror: (error) => log.warn({ err_name: error.name }, 'svc mcp: protocol error'),
      });
      log.info({ url: base }, `svc mcp: serving on stdio, tools call ${base}`);
      // Documents added anywhere else (HTTP API, uploads, other clients) reach this client too.
      const relay = new DaemonChangeRelay({ base, headers, changes, log });
      relay.start();
      await closed;
      await relay.close();
      changes.close();
      await server.close();
    });
}
