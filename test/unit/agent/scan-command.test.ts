// `agent scan` as a user runs it, on the fixture home: the table (a row per server, a line per client on whether its
// tool calls can be captured), the warnings on standard error, and --json; neither shows a planted secret, since a
// scan's output often lands in an MDM log.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { type FixtureHome, fixtureHome } from '#test/support/agent-home.ts';
import { runNode } from '#test/support/child.ts';

const CLI = fileURLToPath(new URL('../../../agent/cli.ts', import.meta.url));
let fx: FixtureHome;
let state: string;
before(() => {
  fx = fixtureHome();
  state = mkdtempSync(join(tmpdir(), 'agent-scan-state-'));
  // A project only the agent's settings name, with a malformed file: a warning, and the rest still scanned.
  mkdirSync(join(fx.home, 'src', 'extra'), { recursive: true });
  writeFileSync(join(fx.home, 'src', 'extra', '.mcp.json'), '{\n  "mcpServers": {\n    "x": \n}\n');
});
after(() => {
  fx.dispose();
  rmSync(state, { recursive: true, force: true });
});

const scan = (args: string[], env: Record<string, string> = {}) =>
  runNode([CLI, 'scan', '--state', state, ...args], {
    cwd: fileURLToPath(new URL('../../../', import.meta.url)),
    env: { HOME: fx.home, PATH: process.env.PATH ?? '', ...env },
  });

test('the table, the capture lines and the warnings; no secret printed', async () => {
  const run = await scan(['--project', join(fx.home, 'src', 'extra')]);
  assert.equal(run.code, 0, run.stderr);
  const lines = run.stdout.split('\n');
  assert.match(lines[0] ?? '', /^CLIENT\s+SCOPE\s+SERVER\s+TRANSPORT\s+ENABLED\s+SOURCE\s+NOTE$/);
  assert.ok(
    lines.some((l) =>
      /^Claude Code\s+local \(~\/src\/api\)\s+github\s+stdio\s+yes\s+oci ghcr\.io\/github\/github-mcp-server:v0\.9\.1/.test(
        l,
      ),
    ),
    run.stdout,
  );
  assert.ok(
    lines.some((l) =>
      /^Windsurf\s+user\s+git\s+stdio\s+no\s+pypi mcp-server-git\s+off: disabled: true/.test(l),
    ),
  );
  assert.ok(lines.some((l) => /^Claude Code\s+user\s+github\s+.*overridden by local in ~\/src\/api/.test(l)));
  assert.ok(
    lines.includes('Claude Code: tool calls can be captured (through its hooks: agent hooks install)'),
  );
  assert.ok(
    lines.includes(
      'Zed: tool calls cannot be captured (the client has no hooks the agent can use; a stdio server can be opted in: agent hooks install --proxy NAME)',
    ),
  );
  assert.match(run.stderr, /^warning: ~\/src\/extra\/\.mcp\.json:4:1: not valid JSON/m);
  for (const secret of fx.secrets)
    assert.ok(!run.stdout.includes(secret) && !run.stderr.includes(secret), secret);
});

test('--json: the same facts, with fingerprints, and no secret', async () => {
  const run = await scan(['--json'], { ACP_AGENT_PROJECT_DIRS: join(fx.home, 'src', 'extra') });
  assert.equal(run.code, 0, run.stderr);
  const out = JSON.parse(run.stdout) as {
    clients: Array<{
      agentType: string;
      servers: Array<{ name: string; scope: string; fingerprint: string }>;
    }>;
    warnings: Array<{ file: string; line: number }>;
    watchedPaths: string[];
  };
  assert.equal(out.clients.length, 8);
  const cc = out.clients.find((c) => c.agentType === 'claude-code');
  assert.match(
    cc?.servers.find((s) => s.name === 'github' && s.scope === 'local')?.fingerprint ?? '',
    /^[0-9a-f]{64}$/,
  );
  assert.deepEqual(
    out.warnings.map((w) => [w.file, w.line]),
    [['~/src/extra/.mcp.json', 4]],
  );
  assert.ok(out.watchedPaths.includes('~/.cursor/mcp.json'));
  for (const secret of fx.secrets) assert.ok(!run.stdout.includes(secret), secret);
});
