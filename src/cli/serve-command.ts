import { Option, type Command } from 'commander';
import { LOG_LEVELS, resolveRuntimeConfig, type RawRuntimeOptions, type RuntimeConfig } from '../app/runtime-config.ts';
import { ConfigError } from '../shared/config-values.ts';
import { runServer } from './run-server.ts';
import { TELEMETRY_MODES } from '../telemetry/telemetry-settings.ts';
import { findConfigFile, mergeConfigFile, readConfigFile } from './config-file.ts';
import { hardwareOptions } from './hardware-options.ts';
import { SPECULATIVE_MODES } from '../inference/llama-engine-options.ts';
import { joinOptions, resolveJoinSettings, type RawJoinOptions } from './join-options.ts';

const collect = (value: string, previous: string[] | undefined): string[] => [...(previous ?? []), value];
/** Options that take a list (repeatable flags, comma lists in SVC_*, arrays in the config file). */
const REPEATABLE = new Set(['port', 'host', 'model', 'upstream', 'pqcTransport']);

/**
 * Log paths pino censors, should a key ever reach a log object (svc's code never puts one
 * there; this is the second line of defence).
 */
export const REDACTED_LOG_PATHS = ['apiKey', '*.apiKey', 'token', '*.token', 'headers.authorization', '*.headers.authorization', 'req.headers.authorization', 'headers.cookie', '*.headers.cookie', 'req.headers.cookie'];

export type ServeOptions = RawRuntimeOptions & RawJoinOptions & { config?: string };

/**
 * The daemon's configuration from what commander parsed (flags and SVC_* variables) and the
 * config file: flags > env > file > defaults. Throws ConfigError with a one-line message.
 */
export function loadServeConfig(parsed: ServeOptions, command: Command, env: NodeJS.ProcessEnv = process.env): { config: RuntimeConfig; configFile: string | undefined; options: ServeOptions } {
  const configFile = findConfigFile(parsed.config, parsed.dataDir);
  const file = configFile === undefined ? undefined : readConfigFile(configFile, command, REPEATABLE);
  const { options, explain } = mergeConfigFile(command, parsed, file);
  try {
    return { config: resolveRuntimeConfig({ ...options, upstreams: file?.upstreams }, env), configFile, options };
  } catch (error) {
    throw error instanceof ConfigError ? explain(error) : error;
  }
}

/** The llama.cpp engine's flags, the same on `svc serve` and `svc hosted` (runtime-config.ts resolveEngineSettings). */
export function engineOptions(): Option[] {
  return [
    new Option('-m, --model <path>', 'a GGUF file to serve, as PATH or ID=PATH; repeat for several').env('SVC_MODEL').argParser(collect),
    new Option('--discover <sources>', 'other tools\' model stores to serve from: a comma list of ollama, huggingface, lmstudio; or all, or none [default: all]').env('SVC_DISCOVER'),
    new Option('--keep-alive <duration>', 'unload a model after this long idle (30s, 5m, 0, forever) [default: 5m]').env('SVC_KEEP_ALIVE'),
    new Option('--max-loaded-models <n>', 'models in memory at once; one more unloads the least recently used idle one, or is refused (503) when all are busy [default: 3]').env('SVC_MAX_LOADED_MODELS'),
    new Option('--parallel <n>', 'requests one model generates at once (continuous batching) [default: 4]').env('SVC_PARALLEL'),
    new Option('--queue-size <n>', 'requests that may wait for a model before 503 [default: 32]').env('SVC_QUEUE_SIZE'),
    new Option('--context-size <tokens>', 'context per request [default: the model\'s, at most 4096]').env('SVC_CONTEXT_SIZE'),
    new Option('--max-tokens <tokens>', 'reply tokens when a chat request sets no max_tokens [default: 2048]').env('SVC_MAX_TOKENS'),
    new Option('--gpu <kind>', 'llama.cpp compute backend').choices(['auto', 'cpu', 'cuda', 'vulkan', 'metal']).env('SVC_GPU'),
    new Option('--threads <n>', 'CPU threads for inference [default: physical cores minus one, at least 1]').env('SVC_THREADS'),
    new Option('--speculative <mode>', 'speculative decoding: lookup guesses tokens from the prompt, draft from --draft-model; replies are the same, only their speed changes (docs/runtime.md) [default: off, or draft with --draft-model]').choices(SPECULATIVE_MODES).env('SVC_SPECULATIVE'),
    new Option('--draft-model <path>', 'a small GGUF with the same vocabulary as the served models, loaded beside each one to draft tokens for it (--speculative draft)').env('SVC_DRAFT_MODEL'),
  ];
}

/** `svc serve`: the local daemon. Every flag has an SVC_* environment variable. */
export function registerServeCommand(program: Command): void {
  const serve = program
    .command('serve')
    .description('run the local daemon: the OpenAI-compatible API, health and solve endpoints on loopback')
    .addOption(new Option('-p, --port <port>', 'port to listen on; repeat for several (0 picks a free one) [default: 11435 and 11440]').env('SVC_PORT').argParser(collect))
    .addOption(new Option('--host <host>', 'loopback address to bind; repeat for several [default: 127.0.0.1 and ::1]').env('SVC_HOST').argParser(collect))
    .addOption(new Option('-d, --data-dir <dir>', 'where svc keeps its data; GGUF files in <dir>/models are served [default: ~/.svc]').env('SVC_DATA_DIR'));
  for (const option of engineOptions()) serve.addOption(option);
  for (const option of hardwareOptions()) serve.addOption(option);
  for (const option of joinOptions()) serve.addOption(option);
  serve
    .addOption(new Option('--log-level <level>', 'log level').choices(LOG_LEVELS).env('SVC_LOG_LEVEL'))
    .addOption(new Option('--body-limit <size>', 'largest request body [default: 16mb]').env('SVC_BODY_LIMIT'))
    .addOption(new Option('--request-timeout <duration>', 'time allowed to upload a request [default: 30s]').env('SVC_REQUEST_TIMEOUT'))
    .addOption(new Option('--shutdown-timeout <duration>', 'grace for in-flight requests on SIGINT/SIGTERM [default: 10s]').env('SVC_SHUTDOWN_TIMEOUT'))
    .addOption(new Option('--telemetry <mode>', 'none sends nothing; basic sends uptime and the daily job count to --telemetry-endpoint once a day (docs/telemetry.md) [default: none]').choices(TELEMETRY_MODES).env('SVC_TELEMETRY'))
    .addOption(new Option('--telemetry-endpoint <url>', 'where --telemetry basic sends its daily report (http or https)').env('SVC_TELEMETRY_ENDPOINT'))
    .addOption(new Option('--pqc-transport <list>', 'serve HTTPS with TLS 1.3 and post-quantum key exchange only, e.g. ml-kem-768,ml-dsa-65 (ml-dsa-*: an ML-DSA certificate, and responses and evidence signed) [default: none, plain HTTP]').env('SVC_PQC_TRANSPORT').argParser(collect))
    .addOption(new Option('--upstream <name=url>', 'an OpenAI-compatible server whose models are served as <name>/<model>, e.g. ollama=http://127.0.0.1:11434/v1; repeat for several').env('SVC_UPSTREAM').argParser(collect))
    .addOption(new Option('--developer-keys <source>', 'accept developer keys (Authorization: Bearer svc_dk_…) for identity, project and per-key limits, checked against an exported key file, a svc hosted data dir, or a postgres:// URL').env('SVC_DEVELOPER_KEYS'))
    .addOption(new Option('--require-developer-key', 'refuse requests without a valid developer key (401); needs --developer-keys [default: off]').env('SVC_REQUIRE_DEVELOPER_KEY'))
    .addOption(new Option('--developer-key-rate <n>', 'requests per second each developer key may sustain [default: 100]').env('SVC_DEVELOPER_KEY_RATE'))
    .addOption(new Option('--developer-key-burst <n>', 'requests each developer key may send at once [default: 500]').env('SVC_DEVELOPER_KEY_BURST'))
    .addOption(new Option('--spaces-embedder <model>', 'the model whose embeddings knowledge spaces use (an id from svc models list) [default: svc-hashed-embed-v2, built in]').env('SVC_SPACES_EMBEDDER'))
    .addOption(new Option('--mcp-port <port>', 'serve /mcp and /openai-tools on this port (every --host) instead of the daemon\'s ports (0 picks a free one) [default: the daemon\'s ports]').env('SVC_MCP_PORT'))
    .addOption(new Option('--mcp-stateless', 'serve /mcp without sessions: each request stands alone (no server-to-client stream or notifications) [default: sessions]').env('SVC_MCP_STATELESS'))
    .addOption(new Option('--mcp-max-sessions <n>', 'MCP sessions open at once; one more is refused with 503 [default: 100]').env('SVC_MCP_MAX_SESSIONS'))
    .addOption(new Option('--mcp-session-idle <duration>', 'close an MCP session after this long without a request [default: 30m]').env('SVC_MCP_SESSION_IDLE'))
    .addOption(new Option('--responses-retention <duration>', 'delete a stored response (Responses API store: true) this long after it was made (30d, 12h, forever) [default: 30d]').env('SVC_RESPONSES_RETENTION'))
    .addOption(new Option('--responses-max-size <size>', 'the most stored responses take on disk; the oldest are deleted first past it; 0 keeps none (store: true refused) [default: 1gb]').env('SVC_RESPONSES_MAX_SIZE'))
    .addOption(new Option('-c, --config <path>', 'config file (TOML or JSON) [default: <data-dir>/config.toml or config.json, if present]').env('SVC_CONFIG'))
    .action(async (parsed: ServeOptions, command: Command) => {
      // A ConfigError reaches the CLI's error handler: one line on stderr, exit 2.
      const { config, configFile, options } = loadServeConfig(parsed, command);
      const join = resolveJoinSettings(options, config.pqcTransport !== undefined);
      // Imported here so `svc --help` and other commands start without the server stack.
      const [{ default: pino }, { startDaemon }, { stdoutLogDestination }] = await Promise.all([import('pino'), import('../app/daemon.ts'), import('../http/stdout-log-destination.ts')]);
      const log = pino({ level: config.logLevel, redact: { paths: REDACTED_LOG_PATHS, censor: '[redacted]' } }, stdoutLogDestination());
      if (configFile !== undefined) log.info({ configFile }, `config file: ${configFile}`);
      const start = async () => {
        const daemon = await startDaemon(config, log);
        if (join === undefined) return daemon;
        const { startNodeAgent } = await import('../app/nodes/node-agent.ts');
        let agent;
        try {
          agent = await startNodeAgent(join, daemon.urls[0]!, config.parallel, log);
        } catch (error) {
          await daemon.close();
          throw error;
        }
        // The node leaves the gateway first, so no new work arrives while the daemon drains.
        return { ...daemon, close: async () => { await agent.close(); await daemon.close(); } };
      };
      await runServer(start, log, (e) => `a port is already in use (${e.message}); is another svc running? choose one with --port`);
    });
}
