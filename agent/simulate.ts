// Realistic MCP tool-call traffic for a simulated fleet: several agent types, MCP servers and tools, allowed /
// denied / error results, tokens and durations, sessions and groups. Deterministic for a given seed.
import { randomUUID } from 'node:crypto';
import { type AgentReport, DeviceClient, type McpReport, type ToolCallEvent } from './client.ts';
import { createDeviceIdentity } from './identity.ts';
import { AGENT_VERSION } from './version.ts';

/** An agent of the simulated inventory: every one lists its MCP servers. */
export type SimulatedAgent = AgentReport & { mcps: McpReport[] };

const npm = (name: string, version?: string) => ({
  type: 'npm' as const,
  name,
  ...(version ? { version } : {}),
});
const remote = (name: string) => ({ type: 'remote' as const, name });
const CATALOG = [
  {
    name: 'filesystem',
    transport: 'stdio',
    source: npm('@modelcontextprotocol/server-filesystem', '2025.8.21'),
    tools: ['read_file', 'write_file', 'list_directory', 'search_files'],
  },
  {
    name: 'github',
    transport: 'http',
    source: remote('https://api.githubcopilot.com'),
    tools: ['create_issue', 'get_pull_request', 'search_code', 'merge_pull_request'],
  },
  {
    name: 'postgres',
    transport: 'stdio',
    source: npm('@modelcontextprotocol/server-postgres'),
    tools: ['query', 'list_tables', 'describe_table'],
  },
  {
    name: 'slack',
    transport: 'sse',
    source: remote('https://mcp.slack.com'),
    tools: ['post_message', 'search_messages', 'list_channels'],
  },
  {
    name: 'browser',
    transport: 'stdio',
    source: npm('@playwright/mcp'),
    tools: ['navigate', 'screenshot', 'click'],
  },
  {
    name: 'jira',
    transport: 'http',
    source: remote('https://mcp.atlassian.com'),
    tools: ['create_ticket', 'search_issues'],
  },
] as const;
/** Configured on some laptops but never called: what the MCP list's configured_never_called shows. */
const IDLE = [
  { name: 'sentry', transport: 'http', source: remote('https://mcp.sentry.dev'), tools: ['list_issues'] },
] as const;
/** Windsurf's `github` is another build of the server (its docs run the image): one name, two sources in the fleet. */
const FORKS: Record<string, Record<string, { type: 'oci'; name: string; version?: string }>> = {
  windsurf: { github: { type: 'oci', name: 'ghcr.io/github/github-mcp-server', version: 'v0.9.1' } },
};
/** Called but configured on no laptop (installed outside the agents' configs): the MCP list's shadow entries. */
const SHADOW = [
  { name: 'pastebin-uploader', transport: 'stdio', tools: ['upload_snippet'] },
  { name: 'wallet-signer', transport: 'stdio', tools: ['sign_transaction'] },
] as const;
const AGENTS = [
  { agentType: 'claude-code', displayName: 'Claude Code', model: 'claude-sonnet-4-5' },
  { agentType: 'cursor', displayName: 'Cursor', model: 'gpt-5' },
  { agentType: 'copilot', displayName: 'GitHub Copilot', model: 'gpt-4.1' },
  { agentType: 'windsurf', displayName: 'Windsurf', model: 'claude-opus-4' },
] as const;
const DENIES = [
  {
    deny_code: 'path_outside_workspace',
    rule_applied: 'fs.workspace-only',
    deny_reason: 'Path is outside the allowed workspace',
  },
  {
    deny_code: 'destructive_sql',
    rule_applied: 'db.read-only',
    deny_reason: 'Statement modifies data; only SELECT is allowed',
  },
  {
    deny_code: 'secret_in_payload',
    rule_applied: 'dlp.secrets',
    deny_reason: 'Payload contains what looks like an API key',
  },
  {
    deny_code: 'merge_requires_review',
    rule_applied: 'github.protected-branches',
    deny_reason: 'Merging to main needs an approved review',
  },
] as const;
const ERRORS = [
  'ECONNRESET talking to the MCP server',
  'tool timed out after 30s',
  'rate limited by upstream (429)',
];
const GROUPS = ['platform', 'data', 'security', 'frontend'];
const PROMPTS = [
  'Find where the billing retry logic lives and explain it',
  'Refactor the user service to use the new repository pattern',
  'Why does the nightly job fail on Mondays?',
  'Summarise the open incidents in #oncall',
  'Write a migration that adds an index on orders.created_at',
];

/** Mulberry32: small, fast, seedable. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const pick = <T>(r: () => number, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)] as T;

export function simulatedInventory(r: () => number): SimulatedAgent[] {
  const agents = AGENTS.filter(() => r() < 0.6);
  if (agents.length === 0) agents.push(AGENTS[0]);
  return agents.map((a) => ({
    agentType: a.agentType,
    displayName: a.displayName,
    mcps: [...CATALOG, ...IDLE]
      .filter((m) => r() < (m.name === 'sentry' ? 0.3 : 0.55))
      .map((m) => ({
        name: m.name,
        enabled: r() < 0.85,
        transport: m.transport,
        scope: 'user',
        source: FORKS[a.agentType]?.[m.name] ?? m.source,
      })),
  }));
}

export function simulatedEvents(
  r: () => number,
  inventory: SimulatedAgent[],
  count: number,
  options: { actorEmail: string; from: Date; to: Date },
): ToolCallEvent[] {
  const events: ToolCallEvent[] = [];
  const span = options.to.getTime() - options.from.getTime();
  let session = randomUUID();
  for (let i = 0; i < count; i++) {
    if (r() < 0.1) session = randomUUID();
    const agent = pick(r, inventory);
    const known = AGENTS.find((a) => a.agentType === agent.agentType);
    // Mostly an MCP the agent has configured (never an idle one), now and then one configured nowhere (shadow).
    const callable = agent.mcps.filter((m) => CATALOG.some((c) => c.name === m.name));
    const mcpName =
      r() < 0.015 ? pick(r, SHADOW).name : callable.length ? pick(r, callable).name : pick(r, CATALOG).name;
    const mcp = [...CATALOG, ...SHADOW].find((m) => m.name === mcpName) ?? CATALOG[0];
    const roll = r();
    const result = roll < 0.82 ? 'allowed' : roll < 0.94 ? 'denied' : 'error';
    const deny = pick(r, DENIES);
    events.push({
      event_time: new Date(options.from.getTime() + Math.floor(r() * span)).toISOString(),
      agent_type: agent.agentType,
      mcp_name: mcp.name,
      tool: pick(r, mcp.tools),
      event_type: result === 'error' ? 'error' : r() < 0.5 ? 'invocation' : 'result',
      result,
      ...(result === 'denied' ? deny : {}),
      ...(result === 'error' ? { error_message: pick(r, ERRORS) } : {}),
      model: known?.model ?? 'unknown',
      session_id: session,
      group: pick(r, GROUPS),
      actor_email: options.actorEmail,
      tokens_in: Math.floor(200 + r() * 6000),
      tokens_out: Math.floor(50 + r() * 2000),
      duration_ms: Math.floor(result === 'error' ? 5000 + r() * 25000 : 20 + r() * r() * 3000),
      skills: r() < 0.3 ? [pick(r, ['code-review', 'sql', 'search', 'refactor'])] : [],
      prompt: pick(r, PROMPTS),
      metadata: { client_version: '1.4.2' },
    });
  }
  return events;
}

/**
 * Simulated device number `index` of fleet `seed`: enrolls with a user's token, reports its inventory, then sends
 * `events` calls between `from` and `to`. Returns how many the service stored. All but its key is a function of the
 * seed and the index (agent simulate; the console's screenshot test, on a fixed clock).
 */
export async function simulateDevice(options: {
  baseUrl: string;
  token: string;
  seed: number;
  index: number;
  events: number;
  from: Date;
  to: Date;
}): Promise<number> {
  const { index: i, seed } = options;
  const identity = await createDeviceIdentity(i % 3 === 2 ? 'ed25519' : 'p256', { commonName: `sim-${i}` });
  const client = new DeviceClient({ baseUrl: options.baseUrl, identity });
  await client.register(options.token, {
    serialNumber: `SIM-${seed}-${String(i).padStart(5, '0')}`,
    brand: ['Apple', 'Lenovo', 'Dell', 'Framework'][i % 4] as string,
    model: ['MacBook Pro 14', 'ThinkPad X1 Carbon', 'XPS 13', 'Laptop 13'][i % 4] as string,
  });
  // One generator per device: parallel devices interleave by timing, so a shared one would deal different traffic
  // to each device from run to run.
  const r = rng(seed * 100_003 + i);
  const inventory = simulatedInventory(r);
  await client.reportInventory(inventory, AGENT_VERSION);
  const events = simulatedEvents(r, inventory, options.events, {
    actorEmail: `user${i}@example.com`,
    from: options.from,
    to: options.to,
  });
  return (await client.sendEvents(events)).accepted;
}
