// The reference endpoint agent: npm run agent -- <command> [options] (see USAGE below, or --help).
// Each command loads what it needs when it runs (dynamic imports), so that a command never pays for another's
// libraries: the bundled agent starts as fast as Node itself for the short commands.
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';
import { parseArgs } from 'node:util';
import type { AgentReport, ToolCallEvent } from './client.ts';
import type { KeyType } from './identity.ts';
import { type AgentState, loadState, saveState } from './state.ts';

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
  run [--inventory-interval 6h] [--rescan-interval 15m]
                               the daemon: reports the inventory at start, when a watched config file changes and
                               every inventory interval, and sends the spooled tool-call events; stops on SIGTERM
  service install|uninstall|status [--root DIR] [--platform darwin|linux|win32]
                               run the daemon as a per-user service (LaunchAgent, systemd user unit, Task
                               Scheduler task); --root writes the definition under DIR and registers nothing
  hooks install|uninstall [--managed] [--client ID]… [--root DIR]
                               register (remove) the hook that records MCP tool calls in each client with hooks;
                               --managed writes the machine-wide files an MDM deploys (docs/endpoint-agent.md)
  hook --client ID --event NAME
                               what the clients run for each hook event (payload on stdin); never run by hand
  hooks install|uninstall --proxy NAME [--client ID]…
                               also (un)wrap the stdio MCP server NAME in the clients' configs with mcp-proxy, which
                               records its tool calls and enforces the policy (clients without hooks: Claude
                               Desktop, VS Code, Windsurf, Zed); uninstall without --proxy unwraps every server
  mcp-proxy --client ID --server NAME -- <command> [args…]
                               what a wrapped server's config runs: relays the client and the server unchanged,
                               records each tools/call, refuses what the policy denies; never run by hand

options:
  --url URL                    the service (default: the saved one, else http://127.0.0.1:8080)
  --state DIR                  where the key, certificate, token, spool and logs are kept (default ~/.acp-agent)
  --token T                    a user token for register / simulate (instead of login)
  --email E                    local sign-in for register / simulate (auth.provider = local); the password is
                               read from ACP_PASSWORD, else asked on the terminal (never on the command line)
  --no-browser                 login: only print the URL
  --version                    the agent's version (the one it reports with its inventory)
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
  ACP_PASSWORD='<password>' npm run agent -- simulate --url http://127.0.0.1:8080 --email admin@localhost --devices 10 --events 2000
  npm run agent -- service install`;

const out = (line: string) => process.stdout.write(`${line}\n`);

/** A mistake in how the command was called: printed with exit code 2. */
class UsageError extends Error {}

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
        // Refused with the reason (below) rather than as an unknown option.
        password: { type: 'string' },
        seed: { type: 'string', default: '42' },
        'no-browser': { type: 'boolean', default: false },
        // run
        'inventory-interval': { type: 'string' },
        'rescan-interval': { type: 'string' },
        // service (and hooks)
        root: { type: 'string' },
        platform: { type: 'string' },
        // scan, inventory, run
        project: { type: 'string', multiple: true, default: [] },
        json: { type: 'boolean', default: false },
        // hook, hooks
        client: { type: 'string', multiple: true },
        event: { type: 'string' },
        managed: { type: 'boolean', default: false },
        'hook-entry': { type: 'string' },
        // hooks install --proxy, mcp-proxy
        proxy: { type: 'string', multiple: true },
        server: { type: 'string' },
        version: { type: 'boolean', default: false },
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
  if (!Number.isInteger(n) || n < 1)
    throw new UsageError(`${flag} must be a positive integer, not ${JSON.stringify(text)}`);
  return n;
}
if (values.help || positionals[0] === 'help') {
  out(USAGE);
  process.exit(0);
}
const command = positionals[0];
const stateDir = values.state ?? join(homedir(), '.acp-agent');
const state: AgentState = loadState(stateDir);

let checkedUrl: string | undefined;
/** The service's address: --url, else the one saved at registration, else the local default; checked once. */
async function serviceUrl(): Promise<string> {
  if (checkedUrl) return checkedUrl;
  const { checkServiceUrl } = await import('./service-address.ts');
  checkedUrl = values.url
    ? checkServiceUrl(values.url)
    : state.baseUrl
      ? checkServiceUrl(state.baseUrl, `the address saved in ${join(stateDir, 'state.json')}`)
      : 'http://127.0.0.1:8080';
  return checkedUrl;
}

async function userToken(): Promise<string> {
  if (values.token) return values.token;
  if (values.email) {
    const { PASSWORD_VARIABLE, readPassword } = await import('./password.ts');
    const password = await readPassword(values.email);
    if (!password)
      throw new UsageError(
        `--email needs a password: set ${PASSWORD_VARIABLE}, or run the command in a terminal to be asked for it`,
      );
    const baseUrl = await serviceUrl();
    const [{ createApiClient }, { notTheService, serviceFetch }] = await Promise.all([
      import('#client/api.ts'),
      import('./service-address.ts'),
    ]);
    const client = createApiClient(baseUrl, { fetch: serviceFetch(baseUrl) });
    const { data, error, response } = await client
      .POST('/v1/auth/login', { body: { email: values.email, password } })
      .catch((err: Error) => {
        // openapi-fetch parses every answer as JSON: what failed that is not the API.
        if (err.name !== 'SyntaxError') throw err;
        throw notTheService(baseUrl, '/v1/auth/login', 0, 'a body that is not JSON');
      });
    if (response.status === 401)
      throw new Error(`wrong email or password for ${baseUrl} (invalid_credentials)`);
    if (response.status === 404)
      throw notTheService(baseUrl, '/v1/auth/login', 404, response.headers.get('content-type'));
    if (!data)
      throw new Error(
        `sign-in as ${values.email} failed at ${baseUrl}: ${response.status} ${error?.message ?? ''}`,
      );
    return data.data.access_token;
  }
  if (state.accessToken) return state.accessToken;
  throw new Error('no user token: run `login` first, or pass --token, or --email (local auth)');
}

/** The email of the user `token` signs in (GET /v1/me), or undefined when the service does not say. */
async function signedInEmail(baseUrl: string, token: string): Promise<string | undefined> {
  const [{ createApiClient }, { serviceFetch }] = await Promise.all([
    import('#client/api.ts'),
    import('./service-address.ts'),
  ]);
  const client = createApiClient(baseUrl, { token, fetch: serviceFetch(baseUrl) });
  const { data } = await client.GET('/v1/me').catch(() => ({ data: undefined }));
  return data?.data.email || undefined;
}

async function enrolledClient() {
  if (!state.identity || !state.deviceId)
    throw new Error('this device is not registered: run `register` first');
  const { DeviceClient } = await import('./client.ts');
  return new DeviceClient({ baseUrl: await serviceUrl(), identity: state.identity });
}

async function main() {
  if (values.version) {
    const { AGENT_VERSION } = await import('./version.ts');
    out(AGENT_VERSION);
    return;
  }
  if (values.password !== undefined)
    throw new UsageError(
      '--password is not accepted: a password on the command line is visible to other users (ps) and stays in the ' +
        "shell's history. Set ACP_PASSWORD instead, or leave it out to be asked in the terminal.",
    );
  switch (command) {
    case 'login': {
      const baseUrl = await serviceUrl();
      const { login } = await import('./login.ts');
      const token = await login({
        baseUrl,
        ...(values['no-browser'] ? { openBrowser: async () => false } : {}),
      });
      saveState(stateDir, { ...state, accessToken: token.access_token, baseUrl });
      out(`Signed in; token valid for ${token.expires_in} s. Next: npm run agent -- register`);
      return;
    }
    case 'register': {
      if (values.key !== 'p256' && values.key !== 'ed25519')
        throw new UsageError(`--key must be p256 or ed25519, not ${JSON.stringify(values.key)}`);
      const baseUrl = await serviceUrl();
      const token = await userToken();
      const [{ createDeviceIdentity, hardwareInfo }, { DeviceClient }] = await Promise.all([
        import('./identity.ts'),
        import('./client.ts'),
      ]);
      state.identity ??= await createDeviceIdentity(values.key as KeyType);
      const hardware = hardwareInfo(state);
      const client = new DeviceClient({ baseUrl, identity: state.identity });
      const { status, body } = await client.register(token, hardware);
      saveState(stateDir, { ...state, deviceId: body.deviceId, baseUrl });
      out(
        `${status === 201 ? 'Registered' : 'Already registered'}: device ${body.deviceId} (${body.certificateFingerprint})`,
      );
      // The person who signed in here uses this laptop: their email goes on the calls of clients whose hook payload
      // does not name the user. Not with --token, which is an enrollment account's, not the laptop user's.
      if (!values.token) {
        const email = await signedInEmail(baseUrl, token);
        const { adoptActorEmail, settingsPath } = await import('./hooks/settings.ts');
        const actor = email ? adoptActorEmail(stateDir, email) : undefined;
        if (actor) out(`Tool calls are recorded as ${actor} (actorEmail in ${settingsPath(stateDir)})`);
      }
      return;
    }
    case 'scan': {
      const [
        { scanMachine },
        { configFingerprint, loadFingerprintKey },
        { scanTable, scanView, warningLine },
        { saveScannedServers },
      ] = await Promise.all([
        import('./discovery/scan.ts'),
        import('./discovery/fingerprint.ts'),
        import('./discovery/print.ts'),
        import('./hooks/known-servers.ts'),
      ]);
      const scan = await scanMachine(scanOptions());
      // The hook splits `mcp__<server>__<tool>` by the configured names: every scan keeps them for it.
      saveScannedServers(stateDir, scan);
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
      const client = await enrolledClient();
      if (values.file) {
        const { readJsonFile } = await import('./input-files.ts');
        const parsed = (await readJsonFile(values.file)) as AgentReport[] | { agents: AgentReport[] };
        const agents = Array.isArray(parsed) ? parsed : parsed.agents;
        const { body } = await client.reportInventory(agents).catch(async (err) => {
          const { ApiError } = await import('./client.ts');
          if (err instanceof ApiError && err.status === 400)
            throw new Error(`${values.file}: the service refused this inventory: ${err.detail}`);
          throw err;
        });
        out(`Inventory accepted: ${body.agentsIn} agents, ${body.mcpsIn} MCP servers`);
        return;
      }
      const [
        { inventoryReport, scanMachine },
        { loadFingerprintKey },
        { warningLine },
        { saveScannedServers },
        { proxiedToolSources },
      ] = await Promise.all([
        import('./discovery/scan.ts'),
        import('./discovery/fingerprint.ts'),
        import('./discovery/print.ts'),
        import('./hooks/known-servers.ts'),
        import('./proxy/tool-hashes.ts'),
      ]);
      const scan = await scanMachine(scanOptions());
      saveScannedServers(stateDir, scan);
      for (const w of scan.warnings) process.stderr.write(`${warningLine(w, homedir())}\n`);
      const report = inventoryReport(
        scan,
        loadFingerprintKey(stateDir),
        proxiedToolSources(stateDir, scan).read,
      );
      const { body } = await client.reportInventory(report.agents, report.agentVersion);
      out(`Inventory accepted: ${body.agentsIn} agents, ${body.mcpsIn} MCP servers`);
      return;
    }
    case 'send-events': {
      if (!values.file) throw new UsageError('--file events.ndjson is required');
      const { readNdjsonFile } = await import('./input-files.ts');
      const { values: events, lines } = await readNdjsonFile(values.file);
      const client = await enrolledClient();
      const result = await client.sendEvents(events as ToolCallEvent[]).catch(async (err) => {
        const { EventRefused } = await import('./client.ts');
        if (err instanceof EventRefused)
          throw new Error(
            `${values.file}:${lines[err.index]}: the service refused this event: ${err.detail} (nothing from its batch was stored)`,
          );
        throw err;
      });
      out(
        `Sent ${events.length} events in ${result.batches} batches: ${result.accepted} stored, ${result.duplicates} duplicates`,
      );
      return;
    }
    case 'simulate': {
      const devices = positiveInt(values.devices, '--devices');
      const perDevice = Math.ceil(positiveInt(values.events, '--events') / devices);
      const baseUrl = await serviceUrl();
      const token = await userToken();
      const { simulateDevice } = await import('./simulate.ts');
      const to = new Date();
      const from = new Date(to.getTime() - 24 * 3_600_000);
      let stored = 0;
      const started = performance.now();
      // A handful of devices at a time: each enrolls, reports its inventory, then streams its calls.
      const queue = Array.from({ length: devices }, (_, i) => i);
      await Promise.all(
        Array.from({ length: Math.min(4, devices) }, async () => {
          for (let i = queue.shift(); i !== undefined; i = queue.shift()) {
            const device = {
              baseUrl,
              token,
              seed: Number(values.seed),
              index: i,
              events: perDevice,
              from,
              to,
            };
            // Not `stored += await …`: that reads `stored` before the await and loses the other workers' counts.
            const sent = await simulateDevice(device);
            stored += sent;
          }
        }),
      );
      out(
        `Simulated ${devices} devices and ${stored} tool-call events in ${((performance.now() - started) / 1000).toFixed(1)} s against ${baseUrl}`,
      );
      return;
    }
    case 'run': {
      if (!state.identity || !state.deviceId)
        throw new Error('this device is not registered: run `register` first');
      const { runDaemonCommand } = await import('./daemon/command.ts');
      await runDaemonCommand({
        stateDir,
        baseUrl: await serviceUrl(),
        identity: state.identity,
        intervals: { inventory: values['inventory-interval'], rescan: values['rescan-interval'] },
        scan: scanOptions(),
      });
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
    case 'mcp-proxy': {
      // Its own parser: the arguments after `--` belong to the wrapped server.
      const { runProxyProcess } = await import('./proxy/main.ts');
      runProxyProcess(process.argv.slice(2));
      return;
    }
    case 'hooks': {
      const { runHooksCommand } = await import('./hooks/hooks-command.ts');
      process.exitCode = await runHooksCommand(
        positionals[1],
        {
          stateDir,
          managed: values.managed,
          ...(values.client ? { clients: values.client } : {}),
          ...(values.root ? { root: values.root } : {}),
          ...(values['hook-entry'] ? { hookEntry: values['hook-entry'] } : {}),
          ...(values.proxy ? { proxy: values.proxy } : {}),
        },
        out,
        (line) => process.stderr.write(`${line}\n`),
      );
      return;
    }
    case 'service': {
      const { serviceCommand } = await import('./service/command.ts');
      serviceCommand(positionals[1], { stateDir, root: values.root, platform: values.platform });
      return;
    }
    default:
      if (command) process.stderr.write(`error: unknown command ${JSON.stringify(command)}\n\n`);
      (command ? process.stderr : process.stdout).write(`${USAGE}\n`);
      process.exitCode = command ? 2 : 0;
  }
}

/** The service's refusals a person can act on, said in their terms; anything else as the service said it. */
function explain(err: Error & { status?: number; code?: string; detail?: string }): string {
  if (err.name !== 'ApiError' && err.name !== 'EventRefused') return err.message;
  const at = checkedUrl ?? 'the service';
  if (err.code === 'unknown_device')
    return `${at} does not know this device (unknown_device): it was removed, or its certificate was replaced; run \`register\` again`;
  if (err.code === 'stale_timestamp')
    return `this machine's clock differs from ${at}'s by more than the allowed skew (stale_timestamp): set the clock to the network time`;
  if (err.code === 'invalid_credentials') return `wrong email or password for ${at} (invalid_credentials)`;
  return err.message;
}

/** This machine, as discovery sees it: the user's home, the projects given by --project and the environment. */
function scanOptions() {
  const fromEnv = (process.env.ACP_AGENT_PROJECT_DIRS ?? '').split(delimiter).filter(Boolean);
  return {
    home: homedir(),
    platform: process.platform,
    env: process.env,
    projectDirs: [...fromEnv, ...values.project],
  };
}

main().catch((err) => {
  process.stderr.write(`error: ${explain(err as Error)}\n`);
  process.exit(err instanceof UsageError || (err as Error).name === 'ServiceUrlError' ? 2 : 1);
});
