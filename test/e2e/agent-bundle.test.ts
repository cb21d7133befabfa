// `npm run agent:build`: one executable file that the Node on the laptop runs, whatever its version from 20 on. It is
// built here into a temporary directory and run under the machine's own Node (found on PATH outside
// node_modules/.bin, or /usr/bin/node: Node 20 on these machines) and under the Node 24 that runs the tests: it
// enrolls a device against the real service, writes a service definition, and fails as friendly as the sources do.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { after, before, test } from 'node:test';
import { freePort } from '#test/support/free-port.ts';
import { buildAgentFile } from '#test/support/hook-runner.ts';
import { startTestService, TEST_ADMIN, type TestService } from '#test/support/service.ts';

const VERSION = '9.8.7-bundle.test';
const work = mkdtempSync(join(tmpdir(), 'acp-bundle-'));
mkdirSync(join(work, 'home'));
const bundle = join(work, 'out', 'acp-agent.cjs');
let svc: TestService;

/** Every Node to run the bundle with: the one running the tests, and the machine's own (outside node_modules). */
function runtimes(): Array<{ path: string; version: string }> {
  const candidates = [process.execPath, '/usr/bin/node', '/usr/local/bin/node'];
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (dir && !dir.includes('node_modules')) candidates.push(join(dir, 'node'));
  }
  const seen = new Map<string, string>();
  for (const candidate of candidates) {
    if (!existsSync(candidate)) continue;
    const real = realpathSync(candidate);
    if (seen.has(real)) continue;
    const version = spawnSync(real, ['--version'], { encoding: 'utf8' }).stdout.trim();
    if (version) seen.set(real, version);
  }
  return [...seen].map(([path, version]) => ({ path, version }));
}

/** A home with no AI client in it: what the bundle scans is this, never the machine's own. */
const home = join(work, 'home');

function run(node: string, args: string[], env: Record<string, string> = {}) {
  return new Promise<{ code: number | null; output: string }>((resolve) => {
    const child = spawn(node, [bundle, ...args], {
      env: { PATH: process.env.PATH ?? '', TZ: 'UTC', HOME: home, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d) => {
      output += d;
    });
    child.stderr.on('data', (d) => {
      output += d;
    });
    child.on('exit', (code) => resolve({ code, output }));
  });
}

before(async () => {
  buildAgentFile(bundle, VERSION);
  svc = await startTestService('pglite', { dashboard_url: 'http://dashboard.test' });
});
after(async () => {
  await svc?.dispose();
  rmSync(work, { recursive: true, force: true });
});

test('one executable file with a shebang and no source map inside', () => {
  assert.deepEqual(readdirSync(join(work, 'out')), ['acp-agent.cjs']);
  const text = readFileSync(bundle, 'utf8');
  assert.ok(text.startsWith('#!/usr/bin/env node\n'));
  assert.ok(statSync(bundle).mode & 0o111, 'executable');
  assert.doesNotMatch(text, /sourceMappingURL/);
});

test('it runs under the machine’s Node and under Node 24: version, help, enrollment and inventory, service file, friendly errors', async (t) => {
  const found = runtimes();
  t.diagnostic(`runtimes: ${found.map((r) => `${r.version} (${r.path})`).join(', ')}`);
  assert.ok(found.length >= 1);
  for (const { path: node, version } of found) {
    assert.ok(Number(/^v(\d+)/.exec(version)?.[1]) >= 20, `${node} is Node ${version}`);

    const printed = await run(node, ['--version']);
    assert.equal(printed.output, `${VERSION}\n`, `${version}: the version fixed at build time`);

    const help = await run(node, ['--help']);
    assert.equal(help.code, 0, `${version}: ${help.output}`);
    assert.match(help.output, /^usage: npm run agent -- <command>/);

    const state = mkdtempSync(join(work, 'state-'));
    for (const key of ['p256', 'ed25519']) {
      const keyState = join(state, key);
      const register = await run(
        node,
        ['register', '--state', keyState, '--key', key, '--url', svc.url, '--email', TEST_ADMIN.email],
        { ACP_PASSWORD: TEST_ADMIN.password },
      );
      assert.equal(register.code, 0, `${version} ${key}: ${register.output}`);
      assert.match(
        register.output,
        /^(Registered|Already registered): device [0-9a-f-]{36} \([0-9a-f]{64}\)/,
      );
      const inventory = await run(node, ['inventory', '--state', keyState]);
      assert.equal(inventory.code, 0, `${version} ${key}: ${inventory.output}`);
      const { deviceId } = JSON.parse(readFileSync(join(keyState, 'state.json'), 'utf8')) as {
        deviceId: string;
      };
      const view = await svc.call('GET', `/v1/admin/devices/${deviceId}`, { token: await svc.adminToken() });
      assert.equal(
        (view.body.data as { device: { agent_version: string } }).device.agent_version,
        VERSION,
        'the inventory reports the built version',
      );
    }

    const root = join(state, 'root');
    const install = await run(node, [
      'service',
      'install',
      '--root',
      root,
      '--platform',
      'linux',
      '--state',
      state,
    ]);
    assert.equal(install.code, 0, `${version}: ${install.output}`);
    const unitPath = readdirSync(root, { recursive: true, withFileTypes: true }).find(
      (e) => e.name === 'acp-agent.service',
    );
    assert.ok(unitPath, `${version}: the unit was written`);
    const unit = readFileSync(join(unitPath.parentPath, unitPath.name), 'utf8');
    assert.ok(
      unit.includes(
        `ExecStart="${node}" "--max-semi-space-size=1" "--lite-mode" "${realpathSync(bundle)}" "run" "--state" "${state}"`,
      ),
      unit,
    );

    const port = await freePort();
    const refused = await run(node, ['login', '--no-browser', '--url', `http://127.0.0.1:${port}`]);
    assert.equal(refused.code, 1);
    assert.equal(
      refused.output.trim(),
      `error: cannot reach the service at http://127.0.0.1:${port} (connection refused): is it running? use --url`,
    );
  }
});
