// `npm start` as a newcomer runs it: a child process on embedded PGlite, used over HTTP, stopped with SIGTERM.
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { chmodSync, existsSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { type AddressInfo, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { runProcess, startMain } from '#test/support/child.ts';
import { PROJECT_ROOT } from '#test/support/fresh-copy.ts';

const children: ChildProcess[] = [];
after(() => {
  for (const child of children) child.kill('SIGKILL');
});

function start(args: string[], env: Record<string, string> = {}) {
  const dataDir = mkdtempSync(join(tmpdir(), 'acp-start-data-'));
  const svc = startMain(args, { SVC_DB_DSN: 'pglite:memory', PORT: '0', SVC_DATA_DIR: dataDir, ...env });
  children.push(svc.child);
  return svc;
}

test('npm start serves the API, prints the admin it created and the sign-in mode, and stops on SIGTERM', async () => {
  const svc = start([]);
  const [, url] = await svc.waitFor(/listening on (http:\/\/127\.0\.0\.1:\d+)/);
  const [, email, password] = await svc.waitFor(/admin created: (\S+) \/ (\S+)/);
  assert.equal(email, 'admin@localhost');
  assert.match(svc.output(), /sign-in mode: local/);
  assert.match(svc.output(), new RegExp(`admin console: ${url}/console/`));
  // config/local.toml enables the agent sign-in against the sign-in page of the admin console it serves.
  assert.match(
    svc.output(),
    /CLI sign-in \(\/v1\/auth\/cli\/\*\): enabled, dashboard http:\/\/127\.0\.0\.1:8080\/console/,
  );
  const page = await fetch(`${url}/console/cli/login?request=x`);
  assert.equal(page.status, 200);
  assert.match(await page.text(), /\/console\/assets\/console-[A-Z0-9]+\.js/);

  const health = await fetch(`${url}/v1/healthcheck`);
  assert.equal(health.status, 200);
  assert.equal(((await health.json()) as { status: string }).status, 'ok');

  const login = await fetch(`${url}/v1/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password }),
  });
  assert.equal(login.status, 200);
  const token = ((await login.json()) as { data: { access_token: string } }).data.access_token;
  const users = await fetch(`${url}/v1/admin/users`, { headers: { authorization: `Bearer ${token}` } });
  assert.equal(users.status, 200);

  // Every log line is structured JSON carrying the request id of its request.
  const requestId = users.headers.get('x-request-id');
  const line = svc
    .output()
    .split('\n')
    .find((l) => l.includes(String(requestId)));
  assert.ok(line, 'log line with the request id');
  assert.equal(JSON.parse(line as string).correlation_id, requestId);
  assert.equal(svc.output().includes(password as string), true, 'the generated password is printed once');
  assert.equal(svc.output().split(password as string).length - 1, 1, 'and only once');

  svc.child.kill('SIGTERM');
  const [code] = await once(svc.child, 'exit');
  assert.equal(code, 0);
});

test('npm start -- --port P: the console sign-in page of config/local.toml follows the port', async () => {
  const free = createServer();
  await new Promise<void>((r) => free.listen(0, '127.0.0.1', r));
  const port = (free.address() as AddressInfo).port;
  await new Promise((r) => free.close(r));
  const svc = start(['--port', String(port)]);
  await svc.waitFor(new RegExp(`listening on http://127\\.0\\.0\\.1:${port}`));
  assert.match(svc.output(), new RegExp(`enabled, dashboard http://127\\.0\\.0\\.1:${port}/console`));
  // The agent's login: the browser is sent to this server's own page, which it serves.
  const challenge = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM';
  const authorize = await fetch(
    `http://127.0.0.1:${port}/v1/auth/cli/authorize?${new URLSearchParams({
      redirect_uri: 'http://127.0.0.1:53682/callback',
      state: 'xyz',
      code_challenge: challenge,
      client_id: 'acp-agent-cli',
      code_challenge_method: 'S256',
    })}`,
    { redirect: 'manual' },
  );
  assert.equal(authorize.status, 302);
  const location = new URL(String(authorize.headers.get('location')));
  assert.equal(location.origin, `http://127.0.0.1:${port}`);
  assert.equal(location.pathname, '/console/cli/login');
  assert.equal((await fetch(location)).status, 200);
  svc.child.kill('SIGTERM');
  await once(svc.child, 'exit');
});

test('startup refuses a dashboard URL that is not absolute, naming the key', async () => {
  const svc = start(['--dashboard-url', 'dashboard.example.com']);
  const [code] = await once(svc.child, 'exit');
  assert.equal(code, 2);
  assert.match(svc.output(), /dashboard_url/);
});

test('with no JWT secret configured, npm start generates one into its data directory (owner-only), says so once, and keeps it', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'acp-secret-'));
  const env = {
    SVC_DATA_DIR: dataDir,
    SVC_DB_DSN: `pglite:${join(dataDir, 'pglite')}`,
    SVC_ADMIN_PASSWORD: 'a long local password',
  };
  const file = join(dataDir, 'jwt-secret');
  const first = start([], env);
  const [, url] = await first.waitFor(/listening on (http:\/\/127\.0\.0\.1:\d+)/);
  assert.match(first.output(), new RegExp(`JWT secret: generated into ${file} \\(owner-only`));
  assert.equal(statSync(file).mode & 0o777, 0o600);
  const secret = readFileSync(file, 'utf8').trim();
  assert.ok(Buffer.byteLength(secret) >= 32);
  assert.equal(first.output().includes(secret), false, 'the secret itself is never printed');
  const login = await fetch(`${url}/v1/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: 'admin@localhost', password: env.SVC_ADMIN_PASSWORD }),
  });
  assert.equal(login.status, 200);
  const token = ((await login.json()) as { data: { access_token: string } }).data.access_token;
  first.child.kill('SIGTERM');
  await once(first.child, 'exit');

  // The next start reads the same secret: the token signed before the restart still works.
  const second = start([], env);
  const [, again] = await second.waitFor(/listening on (http:\/\/127\.0\.0\.1:\d+)/);
  assert.match(second.output(), new RegExp(`JWT secret: read from ${file} \\(owner-only`));
  assert.equal(readFileSync(file, 'utf8').trim(), secret);
  const me = await fetch(`${again}/v1/me`, { headers: { authorization: `Bearer ${token}` } });
  assert.equal(me.status, 200);
  second.child.kill('SIGTERM');
  await once(second.child, 'exit');

  // A secret file others can read is not used.
  chmodSync(file, 0o644);
  const third = start([], env);
  const [code] = await once(third.child, 'exit');
  assert.equal(code, 2);
  assert.match(third.output(), /Refusing to start: auth\.jwt_secret: .*jwt-secret is readable by others/);
});

test('startup refuses a JWT secret committed to this repository, naming the key', async () => {
  const svc = start([], { SVC_JWT_SECRET: 'local-development-secret-change-me-0123456789' });
  const [code] = await once(svc.child, 'exit');
  assert.equal(code, 2);
  assert.match(svc.output(), /auth\.jwt_secret: is a value committed to this repository/);
});

test('startup refuses a short JWT secret, naming the key', async () => {
  const svc = start([], { SVC_JWT_SECRET: 'too-short' });
  const [code] = await once(svc.child, 'exit');
  assert.equal(code, 2);
  assert.match(svc.output(), /auth\.jwt_secret/);
});

test('without a dashboard URL it logs that CLI sign-in is disabled and does not mount /v1/auth/cli/*', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'acp-start-'));
  const file = join(dir, 'no-dashboard.toml');
  const local = readFileSync('config/local.toml', 'utf8');
  writeFileSync(file, local.replace(/^dashboard_url\s*=.*$/m, ''));
  assert.doesNotMatch(readFileSync(file, 'utf8'), /^dashboard_url/m);
  const svc = start(['--config', file]);
  const [, url] = await svc.waitFor(/listening on (http:\/\/127\.0\.0\.1:\d+)/);
  await svc.waitFor(/CLI sign-in is disabled/);
  const authorize = await fetch(`${url}/v1/auth/cli/authorize?redirect_uri=http://127.0.0.1:1/callback`);
  assert.equal(authorize.status, 404);
  svc.child.kill('SIGTERM');
  const [code] = await once(svc.child, 'exit');
  assert.equal(code, 0);
});

test('SVC_ADMIN_PASSWORD against an existing admin with another password: one line says so; npm run reset starts again', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'acp-reset-'));
  const env = { SVC_DATA_DIR: dataDir, SVC_DB_DSN: `pglite:${join(dataDir, 'pglite')}` };
  const reset = () =>
    runProcess('npm', ['run', '--silent', 'reset'], {
      cwd: PROJECT_ROOT,
      env: { PATH: process.env.PATH ?? '', ...env },
    });
  const login = (url: string, password: string) =>
    fetch(`${url}/v1/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'admin@localhost', password }),
    }).then((r) => r.status);

  // The two commands: no password chosen, one made up and shown.
  const first = start([], env);
  const [, generated] = await first.waitFor(/admin created: admin@localhost \/ (\S+)/);
  // While it runs, a reset is refused: the server would go on with deleted files.
  const refused = await reset();
  assert.equal(refused.code, 1);
  assert.match(refused.stderr, /npm start is running .*\(pid \d+\); stop it first/);
  first.child.kill('SIGTERM');
  await once(first.child, 'exit');

  // The walkthrough's start, with a password of the reader's choosing: not applied, and said so in one line.
  const second = start([], { ...env, SVC_ADMIN_PASSWORD: 'a long local password' });
  const [, url] = await second.waitFor(/listening on (http:\/\/127\.0\.0\.1:\d+)/);
  await second.waitFor(/admin: admin@localhost/);
  const lines = second
    .output()
    .split('\n')
    .filter((l) => l.includes('SVC_ADMIN_PASSWORD'));
  assert.deepEqual(
    lines.map((l) => l.trim()),
    [
      'admin: admin@localhost already exists with another password: SVC_ADMIN_PASSWORD was not applied (npm run reset starts again from nothing)',
    ],
  );
  assert.equal(await login(url as string, 'a long local password'), 401);
  assert.equal(await login(url as string, generated as string), 200);
  second.child.kill('SIGTERM');
  await once(second.child, 'exit');

  const done = await reset();
  assert.equal(done.code, 0, done.stderr);
  assert.match(done.stdout, /^reset: removed .* the next npm start creates them again$/m);
  assert.equal(existsSync(dataDir), false);
  assert.match((await reset()).stdout, /^reset: nothing to remove/m);

  const third = start([], { ...env, SVC_ADMIN_PASSWORD: 'a long local password' });
  const [, again] = await third.waitFor(/listening on (http:\/\/127\.0\.0\.1:\d+)/);
  await third.waitFor(/admin: admin@localhost \(created\)/);
  assert.equal(await login(again as string, 'a long local password'), 200);
  third.child.kill('SIGTERM');
  await once(third.child, 'exit');
});

test('a port that is taken or a host that is not this machine: one line naming it and what to do, exit 1', async () => {
  const taken = createServer();
  await new Promise<void>((r) => taken.listen(0, '127.0.0.1', r));
  const port = (taken.address() as AddressInfo).port;
  try {
    const busy = start(['--port', String(port)]);
    const [code] = await once(busy.child, 'exit');
    assert.equal(code, 1);
    const said = busy
      .output()
      .split('\n')
      .filter((l) => l && !l.startsWith('{'));
    assert.deepEqual(said, [
      `Cannot listen on 127.0.0.1:${port}: the port is taken (another npm start?). Stop what uses it, or choose another port: npm start -- --port 8081 (or PORT=…)`,
    ]);
  } finally {
    await new Promise((r) => taken.close(r));
  }
  // 192.0.2.0/24 is TEST-NET-1: never an address of this machine.
  const elsewhere = start(['--host', '192.0.2.1']);
  const [code] = await once(elsewhere.child, 'exit');
  assert.equal(code, 1);
  assert.match(
    elsewhere.output(),
    /^Cannot listen on 192\.0\.2\.1:0: 192\.0\.2\.1 is not an address of this machine\. Use --host 127\.0\.0\.1 \(or HOST\)$/m,
  );
});
