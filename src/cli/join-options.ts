import { Option } from 'commander';
import type { NodeJoinSettings } from '../app/nodes/node-agent.ts';
import { NODE_TOKEN_PREFIX } from '../hosted/nodes/node-tokens.ts';
import { ConfigError } from '../shared/config-values.ts';
import { Secret } from '../shared/secret.ts';

export interface RawJoinOptions {
  join?: string;
  nodeToken?: string;
  advertiseUrl?: string;
  nodeListen?: string;
}

/** `svc serve`'s inference-node flags (docs/inference-nodes.md); like every serve flag, also config-file keys (`join`, `advertise_url`, …). */
export function joinOptions(): Option[] {
  return [
    new Option('--join <url>', 'make this daemon an inference node of the hosted gateway at <url> (docs/inference-nodes.md)').env('SVC_JOIN'),
    new Option('--node-token <token>', 'the node token from `svc hosted node-token create` (prefer SVC_NODE_TOKEN: a flag shows in ps)').env('SVC_NODE_TOKEN'),
    new Option('--advertise-url <url>', 'where the gateway reaches this node, e.g. http://10.0.0.7:11460').env('SVC_ADVERTISE_URL'),
    new Option('--node-listen <host:port>', 'address of the node listener, the only non-loopback door, for the gateway\'s requests [default: 0.0.0.0 and the --advertise-url port]').env('SVC_NODE_LISTEN'),
  ];
}

function httpUrl(value: string, flag: string): URL {
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    url = undefined;
  }
  if (url === undefined || (url.protocol !== 'http:' && url.protocol !== 'https:') || url.username !== '' || url.password !== '') {
    throw new ConfigError(`${flag} ${value}: give an http(s) URL without credentials, e.g. http://10.0.0.7:11460.`);
  }
  return url;
}

/** The join settings, or undefined without --join; ConfigError (one line, exit 2) when they do not fit together. */
export function resolveJoinSettings(raw: RawJoinOptions, pqc: boolean): NodeJoinSettings | undefined {
  if (raw.join === undefined || raw.join === '') {
    if (raw.nodeToken !== undefined || raw.advertiseUrl !== undefined || raw.nodeListen !== undefined) {
      throw new ConfigError('--node-token, --advertise-url and --node-listen go with --join <gateway URL>.');
    }
    return undefined;
  }
  const gateway = httpUrl(raw.join, '--join');
  // Never echo the token, even a malformed one.
  if (raw.nodeToken === undefined || !raw.nodeToken.startsWith(NODE_TOKEN_PREFIX) || raw.nodeToken.length > 256) {
    throw new ConfigError(`--join needs --node-token (or SVC_NODE_TOKEN): a token starting ${NODE_TOKEN_PREFIX} from \`svc hosted node-token create\`.`);
  }
  if (raw.advertiseUrl === undefined) throw new ConfigError('--join needs --advertise-url: where the gateway reaches this node, e.g. http://10.0.0.7:11460.');
  if (pqc) throw new ConfigError('--join does not work with --pqc-transport yet: the node listener speaks plain HTTP to the daemon (docs/inference-nodes.md).');
  const advertise = httpUrl(raw.advertiseUrl, '--advertise-url');
  const advertisePort = Number(advertise.port === '' ? (advertise.protocol === 'https:' ? 443 : 80) : advertise.port);
  const listen = /^(\[[^\]]+\]|[^:]+):(\d{1,5})$/.exec(raw.nodeListen ?? `0.0.0.0:${advertisePort}`);
  const port = listen === null ? NaN : Number(listen[2]);
  if (listen === null || !(port >= 0 && port <= 65535)) throw new ConfigError(`--node-listen ${raw.nodeListen}: give host:port, e.g. 0.0.0.0:11460.`);
  return {
    gateway: gateway.href.replace(/\/+$/, ''),
    token: new Secret(raw.nodeToken),
    advertiseUrl: advertise.href.replace(/\/+$/, ''),
    listenHost: listen[1]!.replace(/^\[|\]$/g, ''),
    listenPort: port,
  };
}
