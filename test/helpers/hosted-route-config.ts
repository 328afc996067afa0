import { routeConfigSchema, type RouteConfig } from '../../src/hosted/route-config.ts';

/** A small route configuration for the hosted app's tests, checked by the real schema. */
export function testRouteConfig(): RouteConfig {
  return routeConfigSchema.parse({
    default_policy: 'supercomputer-fast',
    models: [
      { id: 'svc-chat-small', family: 'chat', description: 'A small chat model.' },
      { id: 'svc-chat-large', family: 'chat' },
    ],
    backends: [
      {
        id: 'pool-a', kind: 'upstream', upstream: { base_url: 'http://10.0.0.7:8000/v1' }, sharing: 'shared', execution_plane: 'supercomputer',
        models: { 'svc-chat-small': 'internal/small-q4', 'svc-chat-large': 'internal/large-q4' },
        energy: { joules_per_prompt_token: 0.01, joules_per_completion_token: 0.05, joules_per_second: 30 }, provider: 'pool-a',
      },
      {
        id: 'local-engine', kind: 'engine', sharing: 'dedicated', execution_plane: 'enterprise',
        models: { 'svc-chat-small': 'tiny' },
        energy: { joules_per_prompt_token: 0.001, joules_per_completion_token: 0.002, joules_per_second: 5 }, provider: 'svc-llama.cpp',
      },
    ],
    routes: [
      { policy: 'supercomputer-fast', queue_class: 'interactive', backends: ['pool-a', 'local-engine'] },
      { policy: 'supercomputer-deep', queue_class: 'deep', backends: ['pool-a'] },
      { policy: 'enterprise-private', queue_class: 'enterprise', backends: ['local-engine'], enterprise_only: true },
    ],
  });
}
