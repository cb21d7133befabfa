// Whether the agent can capture a client's tool calls: only through the client's own hooks, so only for clients
// that have a hook system and that the agent installs into. `agent scan` shows the others as not captured.
import { hookClient } from './clients/index.ts';

export function captureSupport(clientId: string): 'hooks' | 'none' {
  return hookClient(clientId) ? 'hooks' : 'none';
}
