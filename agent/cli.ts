// The reference endpoint agent: npm run agent -- <command> [options] (see USAGE below, or --help).
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';
import { parseArgs } from 'node:util';
import { createApiClient } from '#client/api.ts';
import { type AgentReport, DeviceClient, type ToolCallEvent } from './client.ts';
import { configFingerprint, loadFingerprintKey } from './discovery/fingerprint.ts';
import { scanTable, scanView, warningLine } from './discovery/print.ts';
import { inventoryReport, scanMachine } from './discovery/scan.ts';
import {
  type AgentState,
  createDeviceIdentity,
  hardwareInfo,
  type KeyType,
  loadState,
  saveState,
} from './identity.ts';
import { login } from './login.ts';
import { rng, simulatedEvents, simulatedInventory } from './simulate.ts';
import { AGENT_VERSION } from './version.ts';

const USAGE = `usage: npm run agent -- <command> [options]

commands:
  login                        sign in through the browser (RFC 8252 + PKCE, client_id acp-agent-cli): prints the
                               sign-in URL, opens it when a browser can be opened (the program named by BROWSER,
                               else the system's), and waits for the redirect on a loopback port; exits 1 at once
                               if the person refuses the sign-in
  register [--key p256|ed25519]
                               create the device key and certificate (once) and enroll this device
  scan [--json] [--project DIR]
                               list the AI clients on this machine, their MCP servers, and whether their tool
                               calls can be captured (nothing is sent)
  inventory [--project DIR]    report that scan to the service (what is sent: docs/endpoint-agent.md)
  inventory --file agents.json report a hand-written inventory instead
  send-events --file events.ndjson
                               send tool-call events (one JSON object per line), batched, with event_id
  simulate [--devices N] [--events M] [--seed S]
                               enroll N simulated devices and stream M realistic tool-call events in total
  hooks install|uninstall [--managed] [--client ID]… [--root DIR]
                               register (remove) the hook that records MCP tool calls in each client with hooks;
                               --managed writes the machine-wide files an MDM deploys (docs/endpoint-agent.md)
  hook --client ID --event NAME
                               what the clients run for each hook event (payload on stdin); never run by hand

options:
  --url URL                    the service (default: the saved one, else http://127.0.0.1:8080)
  --state DIR                  where the key, certificate and token are kept (default ~/.acp-agent)
  --token T                    a user token for register / simulate (instead of login)
  --email E --password P       local sign-in for register / simulate (auth.provider = local)
  --no-browser                 login: only print the URL
  --project DIR                scan / inventory: also look in this project directory (repeatable; also
                               ACP_AGENT_PROJECT_DIRS, separated like PATH)
  --json                       scan: print JSON
  -h, --help                   this text

examples:
  npm run agent -- login --url http://127.0.0.1:8080
  npm run agent -- register
  npm run agent -- scan
  npm run agent -- inventory
  npm run agent -- send-events --file events.ndjson
  npm run agent -- simulate --url http://127.0.0.1:8080 --email admin@localhost --password '<password>' --devices 10 --events 2000`;

const out = (line: string) => process.stdout.write(`${line}\n`);

function parse() {
  try {
    return parseArgs({
      allowPositionals: true,
      options: {
        url: { type: 'string' },
        state: { type: 'string' },
        key: { type: 'string', default: 'p256' },
        file: { type: 'string' },
        devices: { type: 'string', default: '10' },
        events: { type: 'string', default: '1000' },
        token: { type: 'string' },
        email: { type: 'string' },
        password: { type: 'string' },
        seed: { type: 'string', default: '42' },
        'no-browser': { type: 'boolean', default: false },
        project: { type: 'string', multiple: true, default: [] },
        json: { type: 'boolean', default: false },
        client: { type: 'string', multiple: true },
        event: { type: 'string' },
        managed: { type: 'boolean', default: false },
        root: { type: 'string' },
        'hook-entry': { type: 'string' },
        help: { type: 'boolean', short: 'h', default: false },
      },
    });
  } catch (err) {
    process.stderr.write(`error: ${(err as Error).message}\n\n${USAGE}\n`);
    process.exit(2);
  }
}

const { positionals, values } = parse();

function positiveInt(text: string, flag: string): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1) {
    process.stderr.write(`error: ${flag} must be a positive integer, not ${JSON.stringify(text)}\n`);
    process.exit(2);
  }
  return n;
}
if (values.key !== 'p256' && values.key !== 'ed25519') {
  process.stderr.write(`error: --key must be p256 or ed25519, not ${JSON.stringify(values.key)}\n`);
  process.exit(2);
}
if (values.help || positionals[0] === 'help') {
  out(USAGE);
  process.exit(0);
}
const command = positionals[0];
const stateDir = values.state ?? join(homedir(), '.acp-agent');
const state: AgentState = loadState(stateDir);
const baseUrl = values.url ?? state.baseUrl ?? 'http://127.0.0.1:8080';

async function userToken(): Promise<string> {
  if (values.token) return values.token;
  if (values.email && values.password) {
    const { data, error, response } = await createApiClient(baseUrl).POST('/v1/auth/login', {
      body: { email: values.email, password: values.password },
    });
    if (!data) throw new Error(`login failed: ${response.status} ${error?.message ?? ''}`);
    return data.data.access_token;
  }
  if (state.accessToken) return state.accessToken;
  throw new Error(
    'no user token: run `login` first, or pass --token, or --email and --password (local auth)',
  );
}

function enrolledClient(): DeviceClient {
  if (!state.identity || !state.deviceId)
    throw new Error('this device is not registered: run `register` first');
  return new DeviceClient({ baseUrl, identity: state.identity });
}

async function main() {
  switch (command) {
    case 'login': {
      const token = await login({
        baseUrl,
        ...(values['no-browser'] ? { openBrowser: async () => false } : {}),
      });
      saveState(stateDir, { ...state, accessToken: token.access_token, baseUrl });
      out(`Signed in; token valid for ${token.expires_in} s. Next: npm run agent -- register`);
      return;
    }
    case 'register': {
      const token = await userToken();
      state.identity ??= await createDeviceIdentity(values.key as KeyType);
      const hardware = hardwareInfo(state);
      const client = new DeviceClient({ baseUrl, identity: state.identity });
      const { status, body } = await client.register(token, hardware);
      saveState(stateDir, { ...state, deviceId: body.deviceId, baseUrl });
      out(
        `${status === 201 ? 'Registered' : 'Already registered'}: device ${body.deviceId} (${body.certificateFingerprint})`,
      );
      return;
    }
    case 'scan': {
      const scan = await scanThisMachine();
      if (values.json) {
        const key = loadFingerprintKey(stateDir);
        out(
          JSON.stringify(
            scanView(scan, homedir(), (name, config) => configFingerprint(key, name, config)),
            null,
            2,
          ),
        );
        return;
      }
      for (const line of scanTable(scan, homedir())) out(line);
      for (const w of scan.warnings) process.stderr.write(`${warningLine(w, homedir())}\n`);
      return;
    }
    case 'inventory': {
      const client = enrolledClient();
      if (values.file) {
        const parsed = JSON.parse(readFileSync(values.file, 'utf8')) as
          | AgentReport[]
          | { agents: AgentReport[] };
        const agents = Array.isArray(parsed) ? parsed : parsed.agents;
        const { body } = await client.reportInventory(agents);
        out(`Inventory accepted: ${body.agentsIn} agents, ${body.mcpsIn} MCP servers`);
        return;
      }
      const scan = await scanThisMachine();
      for (const w of scan.warnings) process.stderr.write(`${warningLine(w, homedir())}\n`);
      const report = inventoryReport(scan, loadFingerprintKey(stateDir));
      const { body } = await client.reportInventory(report.agents, report.agentVersion);
      out(`Inventory accepted: ${body.agentsIn} agents, ${body.mcpsIn} MCP servers`);
      return;
    }
    case 'send-events': {
      if (!values.file) throw new Error('--file events.ndjson is required');
      const events = readFileSync(values.file, 'utf8')
        .split('\n')
        .filter((line) => line.trim())
        .map((line) => JSON.parse(line) as ToolCallEvent);
      const result = await enrolledClient().sendEvents(events);
      out(
        `Sent ${events.length} events in ${result.batches} batches: ${result.accepted} stored, ${result.duplicates} duplicates`,
      );
      return;
    }
    case 'simulate': {
      const token = await userToken();
      const devices = positiveInt(values.devices, '--devices');
      const perDevice = Math.ceil(positiveInt(values.events, '--events') / devices);
      const to = new Date();
      const from = new Date(to.getTime() - 24 * 3_600_000);
      let stored = 0;
      const started = performance.now();
      // A handful of devices at a time: each enrolls, reports its inventory, then streams its calls.
      const queue = Array.from({ length: devices }, (_, i) => i);
      await Promise.all(
        Array.from({ length: Math.min(4, devices) }, async () => {
          for (let i = queue.shift(); i !== undefined; i = queue.shift()) {
            const identity = await createDeviceIdentity(i % 3 === 2 ? 'ed25519' : 'p256', {
              commonName: `sim-${i}`,
            });
            const client = new DeviceClient({ baseUrl, identity });
            await client.register(token, {
              serialNumber: `SIM-${String(values.seed)}-${String(i).padStart(5, '0')}`,
              brand: pick(['Apple', 'Lenovo', 'Dell', 'Framework'], i),
              model: pick(['MacBook Pro 14', 'ThinkPad X1 Carbon', 'XPS 13', 'Laptop 13'], i),
            });
            // One generator per device: the workers interleave by timing, so a shared one would deal different
            // traffic to each device from run to run.
            const r = rng(Number(values.seed) * 100_003 + i);
            const inventory = simulatedInventory(r);
            await client.reportInventory(inventory, AGENT_VERSION);
            const events = simulatedEvents(r, inventory, perDevice, {
              actorEmail: `user${i}@example.com`,
              from,
              to,
            });
            // Not `stored += await …`: that reads `stored` before the await and loses the other workers' counts.
            const sent = await client.sendEvents(events);
            stored += sent.accepted;
          }
        }),
      );
      out(
        `Simulated ${devices} devices and ${stored} tool-call events in ${((performance.now() - started) / 1000).toFixed(1)} s against ${baseUrl}`,
      );
      return;
    }
    case 'hook': {
      const { runHookProcess } = await import('./hooks/main.ts');
      runHookProcess([
        '--client',
        values.client?.[0] ?? '',
        '--event',
        values.event ?? '',
        '--state',
        stateDir,
      ]);
      return;
    }
    case 'hooks': {
      const { runHooksCommand } = await import('./hooks/hooks-command.ts');
      process.exitCode = runHooksCommand(
        positionals[1],
        {
          stateDir,
          managed: values.managed,
          ...(values.client ? { clients: values.client } : {}),
          ...(values.root ? { root: values.root } : {}),
          ...(values['hook-entry'] ? { hookEntry: values['hook-entry'] } : {}),
        },
        out,
        (line) => process.stderr.write(`${line}\n`),
      );
      return;
    }
    default:
      if (command) process.stderr.write(`error: unknown command ${JSON.stringify(command)}\n\n`);
      (command ? process.stderr : process.stdout).write(`${USAGE}\n`);
      process.exitCode = command ? 2 : 0;
  }
}

const pick = <T>(xs: readonly T[], i: number): T => xs[i % xs.length] as T;

/** This machine, as discovery sees it: the user's home, the projects given by --project and the environment. */
function scanThisMachine() {
  const fromEnv = (process.env.ACP_AGENT_PROJECT_DIRS ?? '').split(delimiter).filter(Boolean);
  return scanMachine({
    home: homedir(),
    platform: process.platform,
    env: process.env,
    projectDirs: [...fromEnv, ...values.project],
  });
}

main().catch((err) => {
  process.stderr.write(`error: ${(err as Error).message}\n`);
  process.exit(1);
});
