// Source identity from command lines and URLs (agent/discovery/source-identity.ts): the documented launch lines give
// the package or image, and (property) whatever the command line, nothing but the command's base name or the one
// package / image reference reaches the identity; a URL gives its origin only.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { commandBaseName, commandSource, sourceOf, urlOrigin } from '#agent/discovery/source-identity.ts';
import { runs } from '#test/support/runs.ts';

const cases: Array<[string, string[], object]> = [
  [
    'npx',
    ['-y', '@modelcontextprotocol/server-github'],
    { type: 'npm', name: '@modelcontextprotocol/server-github' },
  ],
  [
    'npx',
    ['-y', 'airtable-mcp-server@1.4.0', '--key', 'x'],
    { type: 'npm', name: 'airtable-mcp-server', version: '1.4.0' },
  ],
  ['npx', ['chrome-devtools-mcp@latest'], { type: 'npm', name: 'chrome-devtools-mcp' }],
  [
    'npx',
    ['--yes', '--package', '@acme/tools@2.0.0', 'acme-mcp'],
    { type: 'npm', name: '@acme/tools', version: '2.0.0' },
  ],
  [
    'npm',
    ['exec', '--', 'mcp-remote@0.1.29', 'https://x.example/mcp'],
    { type: 'npm', name: 'mcp-remote', version: '0.1.29' },
  ],
  ['pnpm', ['dlx', '@playwright/mcp'], { type: 'npm', name: '@playwright/mcp' }],
  ['bunx', ['@acme/zed-mcp@0.2.0'], { type: 'npm', name: '@acme/zed-mcp', version: '0.2.0' }],
  ['C:\\Program Files\\nodejs\\npx.cmd', ['-y', 'mcp-server'], { type: 'npm', name: 'mcp-server' }],
  [
    'cmd',
    ['/c', 'npx', '-y', '@upstash/context7-mcp@1.0.14'],
    { type: 'npm', name: '@upstash/context7-mcp', version: '1.0.14' },
  ],
  ['npx', ['-y', 'github:someone/fork-mcp'], { type: 'executable', name: 'npx' }],
  ['npx', ['-y', 'https://user:token@host.example/pkg.tgz'], { type: 'executable', name: 'npx' }],
  ['uvx', ['mcp-server-fetch'], { type: 'pypi', name: 'mcp-server-fetch' }],
  ['uvx', ['mcp_server.Time==2025.1.2'], { type: 'pypi', name: 'mcp-server-time', version: '2025.1.2' }],
  [
    'uvx',
    ['--from', 'my-mcp-server==0.3.1', 'my-mcp'],
    { type: 'pypi', name: 'my-mcp-server', version: '0.3.1' },
  ],
  [
    'uvx',
    ['--python', '3.12', 'awslabs.core-mcp-server@latest'],
    { type: 'pypi', name: 'awslabs-core-mcp-server' },
  ],
  [
    'uvx',
    ['--index-url', 'https://u:p@pypi.corp/simple', 'corp-mcp>=1.0'],
    { type: 'pypi', name: 'corp-mcp' },
  ],
  ['uv', ['tool', 'run', 'mcp-server-git'], { type: 'pypi', name: 'mcp-server-git' }],
  [
    'pipx',
    ['run', '--spec', 'mcp-server-sqlite==0.6.2', 'mcp-server-sqlite'],
    { type: 'pypi', name: 'mcp-server-sqlite', version: '0.6.2' },
  ],
  [
    'docker',
    ['run', '-i', '--rm', '-e', 'GITHUB_PERSONAL_ACCESS_TOKEN', 'ghcr.io/github/github-mcp-server'],
    { type: 'oci', name: 'ghcr.io/github/github-mcp-server' },
  ],
  [
    'docker',
    ['run', '-i', '--rm', '-e', 'TOKEN=abc', '--network=host', 'mcp/fetch:1.2'],
    { type: 'oci', name: 'mcp/fetch', version: '1.2' },
  ],
  [
    'podman',
    ['run', '-v', '/data:/data', `registry.local:5000/team/mcp@sha256:${'a'.repeat(64)}`],
    { type: 'oci', name: 'registry.local:5000/team/mcp', version: `sha256:${'a'.repeat(64)}` },
  ],
  ['docker', ['compose', 'up'], { type: 'executable', name: 'docker' }],
  [
    '/usr/local/bin/company-mcp-server',
    ['--config', '/etc/x.json'],
    { type: 'executable', name: 'company-mcp-server' },
  ],
  ['python', ['-m', 'my_mcp_server'], { type: 'executable', name: 'python' }],
];

test('the documented launch lines give their package or image', () => {
  for (const [command, args, expected] of cases) {
    assert.deepEqual(commandSource(command, args), expected, `${command} ${args.join(' ')}`);
  }
});

test('an identity stays inside the inventory bounds: a long version is left out, a long name cut', () => {
  const version = `1.0.0-${'a'.repeat(200)}`;
  assert.deepEqual(sourceOf({ transport: 'stdio', command: 'npx', args: [`pkg@${version}`] }), {
    type: 'npm',
    name: 'pkg',
  });
  const long = sourceOf({ transport: 'stdio', command: `/bin/${'x'.repeat(400)}` });
  assert.equal(long.name.length, 300);
});

test('a remote server is its origin: no user, password, path, query or fragment', () => {
  assert.equal(
    urlOrigin('https://user:pw@api.example.com:8443/mcp/x?token=1#f'),
    'https://api.example.com:8443',
  );
  assert.equal(urlOrigin('http://localhost:3000/mcp'), 'http://localhost:3000');
  assert.equal(urlOrigin('https://mcp.example.com:443/a'), 'https://mcp.example.com');
  // A config's own variables (Claude Code expands ${VAR} itself): not a URL the agent can read an origin from.
  const unexpanded = ['$', '{API_BASE_URL}/mcp'].join('');
  assert.equal(urlOrigin(unexpanded), undefined);
  assert.equal(urlOrigin('file:///etc/passwd'), undefined);
  assert.deepEqual(sourceOf({ transport: 'http', url: `${unexpanded}?k=secret` }), {
    type: 'remote',
    name: '(not a URL)',
  });
});

test('property: the identity holds only the base name of the command or one whole reference from the args', () => {
  const token = fc.string({ minLength: 1, maxLength: 30 });
  const launcher = fc.constantFrom(
    'npx',
    'uvx',
    'docker',
    'podman',
    'pipx',
    'npm',
    'pnpm',
    'bunx',
    'uv',
    'cmd',
    'node',
    '/opt/x/bin/tool',
  );
  fc.assert(
    fc.property(launcher, fc.array(token, { maxLength: 12 }), (command, args) => {
      const source = commandSource(command, args);
      // PyPI names are compared as PEP 503 normalises them.
      const pep503 = (a: string) => a.toLowerCase().replace(/[-_.]+/g, '-');
      const allowed = [commandBaseName(command), ...args, ...args.map(pep503)];
      // The name and the version each come from the command's base name or from a single argument.
      const fromOne = allowed.some(
        (a) => a.includes(source.name) && (!source.version || a.includes(source.version)),
      );
      assert.ok(fromOne || source.name === '(none)', JSON.stringify({ command, args, source }));
      // Nothing from two arguments is joined into one identity.
      assert.ok(!/\s/.test(source.name), 'no whitespace in a name');
    }),
    { numRuns: runs(2000) },
  );
});

test('property: secrets after the package never reach the identity', () => {
  const pkg = fc
    .tuple(
      fc.option(fc.stringMatching(/^[a-z][a-z0-9-]{0,10}$/)),
      fc.stringMatching(/^[a-z][a-z0-9-]{0,20}$/),
    )
    .map(([scope, name]) => (scope ? `@${scope}/${name}` : name));
  const version = fc.option(fc.tuple(fc.nat(50), fc.nat(50), fc.nat(50)).map((v) => v.join('.')));
  const secret = fc.stringMatching(/^[A-Za-z0-9_=+/-]{8,40}$/);
  fc.assert(
    fc.property(pkg, version, fc.array(secret, { minLength: 1, maxLength: 5 }), (name, ver, secrets) => {
      const source = commandSource('npx', [
        '-y',
        ver ? `${name}@${ver}` : name,
        ...secrets.map((s) => `--token=${s}`),
      ]);
      assert.deepEqual(source, ver ? { type: 'npm', name, version: ver } : { type: 'npm', name });
      const text = JSON.stringify(source);
      for (const s of secrets) assert.ok(!text.includes(`--token=${s}`));
    }),
    { numRuns: runs(500) },
  );
});

test('property: an origin never carries the path, the query or the credentials', () => {
  fc.assert(
    fc.property(
      fc.webUrl({ withQueryParameters: true, withFragments: true }),
      fc.stringMatching(/^[a-z0-9]{6,12}$/),
      (url, cred) => {
        const withCred = url.replace('://', `://u${cred}:p${cred}@`);
        const origin = urlOrigin(withCred);
        if (origin === undefined) return;
        const parsed = new URL(withCred);
        assert.equal(origin, `${parsed.protocol}//${parsed.host}`);
        assert.ok(!origin.includes(cred));
      },
    ),
    { numRuns: 60 },
  );
});
