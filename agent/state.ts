// What the agent keeps between runs, in its state directory (state.json, owner-only): the device identity, the
// hardware fallback id, the enrollment, the sign-in token and the service's address. No heavy imports: the daemon and
// the hook read it at start.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { DeviceIdentity } from './identity.ts';

export interface AgentState {
  identity?: DeviceIdentity;
  fallbackSerial?: string;
  deviceId?: string;
  accessToken?: string;
  baseUrl?: string;
}

export function loadState(dir: string): AgentState {
  try {
    return JSON.parse(readFileSync(join(dir, 'state.json'), 'utf8')) as AgentState;
  } catch {
    return {};
  }
}

export function saveState(dir: string, state: AgentState): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  writeFileSync(join(dir, 'state.json'), `${JSON.stringify(state, null, 2)}\n`, { mode: 0o600 });
}
