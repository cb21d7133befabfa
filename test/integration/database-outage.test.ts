// A database that goes away gives 503 database_unavailable, and the service recovers when it returns, without a
// restart. The outage is real: a TCP proxy between the service's pool and PostgreSQL is stopped and started.
// A database that gives up on a statement (here: the statement timeout, while another session holds a lock the
// statement needs) gives 503 database_busy, stores nothing, and the retry succeeds.
import assert from 'node:assert/strict';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { sql } from 'drizzle-orm';
import pg from 'pg';
import { createDeviceIdentity } from '#shared/agent/identity.ts';
import { queryRows } from '#shared/db/query.ts';
import { createPostgresDatabase, testDatabaseUrl } from '#test/support/databases.ts';
import { hardware, invocationEvent, prepare, send } from '#test/support/device-requests.ts';
import { startTestService, type TestService } from '#test/support/service.ts';

function startProxy(target: URL, port = 0): Promise<{ server: Server; port: number; stop(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect(Number(target.port || 5432), target.hostname);
    sockets.add(client).add(upstream);
    client.pipe(upstream).pipe(client);
    const close = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', close).on('close', close);
    upstream.on('error', close).on('close', close);
  });
  return new Promise((resolve) =>
    server.listen(port, '127.0.0.1', () => {
      const address = server.address() as { port: number };
      resolve({
        server,
        port: address.port,
        stop: () =>
          new Promise<void>((done) => {
            for (const s of sockets) s.destroy();
            server.close(() => done());
          }),
      });
    }),
  );
}

// PGlite is embedded and cannot go away, so this suite needs a server: it runs when TEST_DATABASE_URL is set (CI).
describe('database outage on postgres', () => {
  if (!testDatabaseUrl()) return;
  let svc: TestService;
  let proxy: Awaited<ReturnType<typeof startProxy>>;
  let drop: () => Promise<void>;
  before(async () => {
    const database = await createPostgresDatabase();
    drop = database.drop;
    const url = new URL(database.url);
    proxy = await startProxy(url);
    const viaProxy = new URL(database.url);
    viaProxy.hostname = '127.0.0.1';
    viaProxy.port = String(proxy.port);
    svc = await startTestService('pglite', { db: { dsn: viaProxy.toString() } });
  });
  after(async () => {
    await svc?.dispose();
    await proxy?.stop();
    await drop?.();
  });

  test('503 while down, 200 again once it is back', async () => {
    const token = await svc.adminToken();
    assert.equal((await svc.call('GET', '/v1/healthcheck')).status, 200);
    const port = proxy.port;
    await proxy.stop();

    const health = await svc.call('GET', '/v1/healthcheck');
    assert.equal(health.status, 503);
    assert.equal(health.body.status, 'unavailable');
    const list = await svc.call('GET', '/v1/admin/audit-logs', { token });
    assert.equal(list.status, 503);
    assert.deepEqual(list.body, {
      error: 'database_unavailable',
      message: 'The database is unavailable right now; retry in a few seconds.',
    });
    const login = await svc.call('POST', '/v1/auth/login', { body: { email: 'a@b.test', password: 'x' } });
    assert.equal(login.status, 503);

    proxy = await startProxy(new URL(testDatabaseUrl() as string), port);
    let status = 0;
    for (let i = 0; i < 20 && status !== 200; i++) {
      status = (await svc.call('GET', '/v1/admin/audit-logs', { token })).status;
      if (status !== 200) await new Promise((r) => setTimeout(r, 250));
    }
    assert.equal(status, 200);
    assert.equal((await svc.call('GET', '/v1/healthcheck')).body.status, 'ok');
  });
});

describe('a busy database on postgres', () => {
  if (!testDatabaseUrl()) return;
  let svc: TestService;
  before(async () => {
    svc = await startTestService('postgres', {
      dashboard_url: 'http://dashboard.test',
      db: { statement_timeout: '1s' },
      query: { statement_timeout: '500ms' },
    });
  });
  after(async () => svc?.dispose());

  test('a batch that waits past the statement timeout on a locked row: 503 database_busy, nothing stored', async () => {
    const identity = await createDeviceIdentity('p256');
    const reg = await send(
      svc.url,
      prepare('/v1/devices/register', identity, hardware(), { token: await svc.adminToken() }),
    );
    assert.equal(reg.status, 201);
    const deviceId = String(reg.body.deviceId);
    const events = Array.from({ length: 3 }, () => invocationEvent());
    const stored = async () =>
      (
        await queryRows<{ n: number }>(
          svc.runtime.database.db,
          sql`SELECT count(*)::int AS n FROM observability_events WHERE device_id = ${deviceId}::uuid`,
        )
      )[0]?.n;
    // Another session holds the device's row, as a long transaction would.
    const holder = new pg.Client({ connectionString: svc.runtime.config.db.dsn });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query('SELECT 1 FROM devices WHERE id = $1 FOR UPDATE', [deviceId]);
      const busy = await send(svc.url, prepare('/v1/devices/events', identity, { events }));
      assert.equal(busy.status, 503);
      assert.equal(busy.body.error, 'database_busy');
      assert.match(String(busy.body.message), /retry/);
      assert.equal(await stored(), 0);
    } finally {
      await holder.query('ROLLBACK');
      await holder.end();
    }
    // The agent's retry: re-signed with a fresh timestamp, the same events.
    const retried = await send(svc.url, prepare('/v1/devices/events', identity, { events }));
    assert.equal(retried.status, 200);
    assert.equal(retried.body.accepted, 3);
    assert.equal(await stored(), 3);
  });
});
