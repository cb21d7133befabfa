// The daemon (`agent run`) against the real local service, on a fixture home with Claude Code and Cursor configured:
// it reports the inventory at start and again when a watched config file changes; it flushes the spool the hooks
// append to; it keeps everything while the service is down and delivers it once it is back, each event once; it
// honours Retry-After; it drops an event the service refuses and sends the rest of its batch; it stops cleanly on
// SIGTERM. One driver (PGlite): what is tested is the agent, and the device tests cover the drivers.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { sql } from 'drizzle-orm';
import { DeviceClient } from '#agent/client.ts';
import { type Daemon, startDaemon } from '#agent/daemon/daemon.ts';
import { rotatingLog } from '#agent/daemon/log.ts';
import type { DaemonSettings } from '#agent/daemon/settings.ts';
import { machineSources } from '#agent/daemon/sources.ts';
import { loadDaemonStatus } from '#agent/daemon/status.ts';
import { knownServers } from '#agent/hooks/index.ts';
import { createDeviceIdentity, type DeviceIdentity } from '#agent/identity.ts';
import { openSpool } from '#agent/spool/spool.ts';
import { saveState } from '#agent/state.ts';
import { AGENT_VERSION } from '#agent/version.ts';
import type { LocalService } from '#local-server/service.ts';
import { queryRows } from '#shared/core/db/query.ts';
import { createLogger } from '#shared/core/logger.ts';
import { provisionDatabase } from '#test/support/databases.ts';
import { invocationEvent } from '#test/support/device-requests.ts';
import { freePort } from '#test/support/free-port.ts';
import { startCheckedService, TEST_ADMIN, testConfig } from '#test/support/service.ts';
import { until } from '#test/support/until.ts';

const FAST: Partial<DaemonSettings> = {
  debounceMs: 200,
  flushDelayMs: 100,
  // Long enough that only a file watch or the spool's own watch can explain what the tests see.
  rescanIntervalMs: 3_600_000,
  inventoryIntervalMs: 3_600_000,
  spoolPollMs: 3_600_000,
  backoff: { baseMs: 100, capMs: 1000, maxRetryAfterMs: 10_000 },
  stopGraceMs: 2000,
};

/** A laptop's home: Claude Code with a user-scope server, Cursor with a global one. */
function fixtureHome(root: string): string {
  const home = join(root, 'home');
  mkdirSync(join(home, '.cursor'), { recursive: true });
  writeFileSync(
    join(home, '.claude.json'),
    JSON.stringify({
      mcpServers: {
        filesystem: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-filesystem', '/tmp'] },
      },
    }),
  );
  writeFileSync(
    join(home, '.cursor', 'mcp.json'),
    JSON.stringify({
      mcpServers: { github: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-github'] } },
    }),
  );
  return home;
}

describe('the daemon against the service', () => {
  const root = mkdtempSync(join(tmpdir(), 'acp-daemon-'));
  const stateDir = join(root, 'state');
  const home = fixtureHome(root);
  let database: { dsn: string; cleanup(): Promise<void> };
  let port: number;
  let service: LocalService | undefined;
  let admin: string;
  let identity: DeviceIdentity;
  let deviceId: string;
  let daemon: Daemon;
  let appended = 0;

  const start = async () => {
    const config = testConfig({ port, dashboard_url: 'http://dashboard.test', db: { dsn: database.dsn } });
    service = (await startCheckedService({ config, log: createLogger({ test: true }) })).service;
  };
  const call = async (path: string) => {
    const res = await fetch(`http://127.0.0.1:${port}${path}`, {
      headers: { authorization: `Bearer ${admin}` },
    });
    return (await res.json()) as { data: Record<string, unknown> };
  };
  const stored = async () => {
    const [row] = await queryRows(
      (service as LocalService).runtime.database.db,
      sql`SELECT count(*)::int AS n, count(DISTINCT event_id)::int AS distinct FROM observability_events
        WHERE device_id = ${deviceId}::uuid`,
    );
    return row as { n: number; distinct: number };
  };
  const mcpNames = async () =>
    ((await call(`/v1/admin/devices/${deviceId}`)).data.mcps as Array<{ name: string }>)
      .map((m) => m.name)
      .sort();
  const append = (events: Array<Record<string, unknown>>) => {
    const spool = openSpool(stateDir);
    for (const event of events) spool.append(event);
    appended += events.filter((e) => e.result !== 'denied' || e.deny_code).length;
  };

  before(async () => {
    database = await provisionDatabase('pglite');
    port = await freePort();
    await start();
    const login = await fetch(`http://127.0.0.1:${port}/v1/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(TEST_ADMIN),
    });
    admin = ((await login.json()) as { data: { access_token: string } }).data.access_token;
    identity = await createDeviceIdentity('p256');
    const baseUrl = `http://127.0.0.1:${port}`;
    const { body } = await new DeviceClient({ baseUrl, identity }).register(admin, {
      serialNumber: 'DAEMON-1',
      brand: 'Test',
      model: 'Laptop',
    });
    deviceId = body.deviceId;
    saveState(stateDir, { identity, deviceId, baseUrl });
    const sources = await machineSources(stateDir, { home, platform: process.platform, env: {} });
    daemon = await startDaemon({
      stateDir,
      baseUrl,
      identity,
      ...sources,
      log: rotatingLog(join(stateDir, 'logs', 'agent.log')),
      settings: FAST,
    });
  });
  after(async () => {
    await daemon?.stop();
    await service?.stop();
    await database?.cleanup();
    rmSync(root, { recursive: true, force: true });
  });

  test('the inventory at start, and again when a watched config file changes', async () => {
    assert.deepEqual(
      await until('the first inventory', async () => {
        const names = await mcpNames();
        return names.length === 2 ? names : undefined;
      }),
      ['filesystem', 'github'],
    );
    const device = (await call(`/v1/admin/devices/${deviceId}`)).data.device as { agent_version?: string };
    assert.equal(device.agent_version, AGENT_VERSION, 'the inventory carries the agent version');
    // The scan's server names are kept for the hook, which splits mcp__<server>__<tool> by them.
    assert.deepEqual(knownServers(stateDir, 'cursor'), ['github']);
    assert.deepEqual(knownServers(stateDir, 'claude-code'), ['filesystem']);
    // An editor's save: a new file renamed over the old one.
    const cursor = join(home, '.cursor', 'mcp.json');
    writeFileSync(
      `${cursor}.tmp`,
      JSON.stringify({
        mcpServers: {
          github: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-github'] },
          linear: { url: 'https://mcp.linear.app/sse' },
        },
      }),
    );
    const { renameSync } = await import('node:fs');
    renameSync(`${cursor}.tmp`, cursor);
    assert.deepEqual(
      await until(
        'the inventory after the change',
        async () => {
          const names = await mcpNames();
          return names.includes('linear') ? names : undefined;
        },
        10_000,
      ),
      ['filesystem', 'github', 'linear'],
    );
  });

  test('the spool is flushed in batches, each event once, and acknowledged', async () => {
    const before = (await stored()).n;
    append(Array.from({ length: 2500 }, () => invocationEvent()));
    await until('2,500 events stored', async () => ((await stored()).n === before + 2500 ? true : undefined));
    // The service stores a batch before the daemon hears of it and acknowledges it.
    await until(
      'all acknowledged',
      () => (openSpool(stateDir).stats().pending === 0 ? true : undefined),
      5000,
    );
    const status = loadDaemonStatus(stateDir);
    assert.ok((status?.events.stored ?? 0) >= 2500);
  });

  test('the service down: the daemon backs off, then delivers everything once (stored = distinct)', async () => {
    await service?.stop();
    service = undefined;
    append(Array.from({ length: 3000 }, () => invocationEvent()));
    const retrying = await until('the daemon retrying', () => loadDaemonStatus(stateDir)?.retrying);
    assert.match(
      retrying.error,
      /cannot reach the service at http:\/\/127\.0\.0\.1:\d+ \(connection refused\)/,
    );
    await new Promise((r) => setTimeout(r, 1500));
    await start();
    await until(
      'everything delivered',
      async () => ((await stored()).n === appended ? true : undefined),
      60_000,
    );
    const { n, distinct } = await stored();
    assert.equal(n, distinct, 'no event stored twice');
    assert.equal(n, appended);
    await until('back to normal', () => (loadDaemonStatus(stateDir)?.retrying ? undefined : true));
    const log = readFileSync(join(stateDir, 'logs', 'agent.log'), 'utf8');
    assert.match(log, /warn .*connection refused.*\(attempt \d+; next in \d+ s\)/);
    assert.match(log, /the service is reachable again after \d+ failed attempts/);
  });

  test('an event the service refuses is dropped and counted; the rest of its batch is stored', async () => {
    const before = (await stored()).n;
    const refusedBefore = loadDaemonStatus(stateDir)?.events.refused ?? 0;
    const bad = invocationEvent({ result: 'denied' });
    append([invocationEvent(), invocationEvent(), bad, invocationEvent(), invocationEvent()]);
    await until('the four others stored', async () => ((await stored()).n === before + 4 ? true : undefined));
    assert.equal(loadDaemonStatus(stateDir)?.events.refused, refusedBefore + 1);
    await until('the batch acknowledged, the refused event with it', () =>
      openSpool(stateDir).stats().pending === 0 ? true : undefined,
    );
    const log = readFileSync(join(stateDir, 'logs', 'agent.log'), 'utf8');
    assert.match(
      log,
      new RegExp(
        `event ${bad.event_id} refused by the service and dropped: 400 validation_failed: .*deny_code`,
      ),
    );
    // The next batch reports the count, and the admin sees it on the device.
    append([invocationEvent()]);
    const spool = await until('the counters on the device', async () => {
      const shown = (await call(`/v1/admin/devices/${deviceId}`)).data.spool as { refused: number } | null;
      return shown?.refused === refusedBefore + 1 ? shown : undefined;
    });
    assert.deepEqual(
      { ...spool, reported_at: undefined },
      { dropped: 0, torn: 0, refused: 1, reported_at: undefined },
    );
  });

  test('stop: the status says so and the state directory is released', async () => {
    const started = Date.now();
    await daemon.stop();
    assert.ok(Date.now() - started < 3000);
    assert.ok(loadDaemonStatus(stateDir)?.stoppedAt);
    assert.equal(existsSync(join(stateDir, 'daemon.pid')), false);
  });
});

test('Retry-After: a 503 that says 2 seconds is not retried sooner', async () => {
  const root = mkdtempSync(join(tmpdir(), 'acp-daemon-'));
  const attempts: number[] = [];
  const server = createServer((req: IncomingMessage, res) => {
    req.resume();
    attempts.push(Date.now());
    res.writeHead(503, { 'content-type': 'application/json', 'retry-after': '2' });
    res.end(
      JSON.stringify({ error: 'database_unavailable', message: 'The database is unavailable right now.' }),
    );
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const identity = await createDeviceIdentity('ed25519');
  const daemon = await startDaemon({
    stateDir: root,
    baseUrl,
    identity,
    version: 'test',
    inventory: { scan: async () => ({ body: { agents: [] }, watchedPaths: [] }) },
    spool: openSpool(root) as never,
    log: rotatingLog(join(root, 'agent.log')),
    settings: FAST,
  });
  try {
    await new Promise((r) => setTimeout(r, 4500));
    assert.ok(attempts.length >= 2 && attempts.length <= 3, `${attempts.length} attempts in 4.5 s`);
    for (let i = 1; i < attempts.length; i++) {
      const gap = (attempts[i] as number) - (attempts[i - 1] as number);
      assert.ok(gap >= 2000, `attempt ${i + 1} came ${gap} ms after the one before`);
    }
    assert.match(loadDaemonStatus(root)?.retrying?.error ?? '', /^inventory: 503 database_unavailable/);
  } finally {
    await daemon.stop();
    server.close();
    rmSync(root, { recursive: true, force: true });
  }
});

test('events older than the retention window: all of them dropped at once and counted, the rest stored', async () => {
  // The service's refusal as device-protocol.md documents it (400 event_too_old naming the first such event and
  // where the window starts), from a local server that records what it stores.
  const root = mkdtempSync(join(tmpdir(), 'acp-daemon-'));
  const windowStart = Date.now() - 90 * 86_400_000;
  const stored = new Set<string>();
  let batches = 0;
  const server = createServer((req, res) => {
    let text = '';
    req.on('data', (d) => (text += d));
    req.on('end', () => {
      const reply = (status: number, body: unknown) =>
        res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      const receivedAt = new Date().toISOString();
      if (req.url === '/v1/devices/inventory')
        return reply(200, { success: true, deviceId: randomUUID(), agentsIn: 0, mcpsIn: 0, receivedAt });
      // A service from before policies: the daemon carries on without one.
      if (req.url === '/v1/devices/policy') return reply(404, { error: 'not_found', message: 'No route.' });
      batches++;
      const { events } = JSON.parse(text) as { events: Array<{ event_id: string; event_time: string }> };
      const old = events.filter((e) => Date.parse(e.event_time) < windowStart);
      const first = events.findIndex((e) => Date.parse(e.event_time) < windowStart);
      if (first >= 0)
        return reply(400, {
          error: 'event_too_old',
          message: `body.events[${first}].event_time: ${events[first]?.event_time} is before the retention window, which starts at ${new Date(windowStart).toISOString()} (events.retention: 90 days); ${old.length} of ${events.length} events are outside it (${old.length} too old, 0 in the future). A batch is all or nothing: drop the events outside the window and send the rest.`,
        });
      for (const e of events) stored.add(e.event_id);
      return reply(200, {
        success: true,
        deviceId: randomUUID(),
        accepted: events.length,
        duplicates: 0,
        receivedAt,
      });
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const spool = openSpool(root);
  const fresh: string[] = [];
  for (let i = 0; i < 500; i++) {
    const tooOld = i % 5 < 3;
    const event = invocationEvent({
      event_time: new Date(tooOld ? windowStart - (i + 1) * 3_600_000 : Date.now() - i * 1000).toISOString(),
    });
    if (!tooOld) fresh.push(event.event_id);
    spool.append(event);
  }
  const daemon = await startDaemon({
    stateDir: root,
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    identity: await createDeviceIdentity('p256'),
    version: 'test',
    inventory: { scan: async () => ({ body: { agents: [] }, watchedPaths: [] }) },
    spool: spool as never,
    log: rotatingLog(join(root, 'agent.log')),
    settings: FAST,
  });
  try {
    await until('the fresh events stored', () => (stored.size === fresh.length ? true : undefined));
    assert.deepEqual([...stored].sort(), [...fresh].sort(), 'no event older than the window was sent again');
    assert.equal(batches, 2, 'one refusal, then the rest in one batch');
    assert.equal(loadDaemonStatus(root)?.events.refused, 300);
    await until('acknowledged', () => (openSpool(root).stats().pending === 0 ? true : undefined));
  } finally {
    await daemon.stop();
    server.close();
    rmSync(root, { recursive: true, force: true });
  }
});

test('agent run stops cleanly on SIGTERM', async () => {
  const root = mkdtempSync(join(tmpdir(), 'acp-daemon-'));
  const server = createServer((req, res) => {
    req.resume();
    res.writeHead(503, { 'content-type': 'application/json', 'retry-after': '1' });
    res.end('{"error":"database_unavailable","message":"later"}');
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const state = join(root, 'state');
  saveState(state, { identity: await createDeviceIdentity('p256'), deviceId: 'unused', baseUrl });
  const child: ChildProcess = spawn(process.execPath, ['agent/cli.ts', 'run', '--state', state], {
    env: { PATH: process.env.PATH ?? '', TZ: 'UTC', HOME: fixtureHome(root) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (d) => (output += d));
  child.stderr?.on('data', (d) => (output += d));
  const exited = once(child, 'exit');
  try {
    await until('the daemon started', () => loadDaemonStatus(state)?.retrying);
    child.kill('SIGTERM');
    const [code] = (await Promise.race([
      exited,
      new Promise((r) => setTimeout(() => r([undefined]), 5000)),
    ])) as [number];
    assert.equal(code, 0, output);
    assert.ok(loadDaemonStatus(state)?.stoppedAt);
    assert.match(
      readFileSync(join(state, 'logs', 'agent.log'), 'utf8'),
      /SIGTERM: stopping\n.*info stopped\n$/,
    );
  } finally {
    if (child.exitCode === null) child.kill('SIGKILL');
    server.close();
    rmSync(root, { recursive: true, force: true });
  }
});
