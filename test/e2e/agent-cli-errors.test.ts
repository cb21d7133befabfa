// The agent CLI when things go wrong, run as a person runs it (a child process): each network or address mistake
// gets one message that names the URL and says what to do; a bad file names the file and the line; a password is
// never taken from the command line.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { runAgentCli } from '#test/support/child.ts';
import { selfSignedTls } from '#test/support/device-keys.ts';
import { freePort } from '#test/support/free-port.ts';
import { startTestService, TEST_ADMIN, type TestService } from '#test/support/service.ts';

const dirs: string[] = [];
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'acp-cli-'));
  dirs.push(dir);
  return dir;
};
after(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** Runs the CLI to its end: exit code and everything it printed. */
async function cli(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number | null; output: string }> {
  const run = runAgentCli(['--state', tempDir(), ...args], env);
  const code = await run.exited;
  return { code, output: run.output() };
}

const listen = async (server: Server) => {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return (server.address() as AddressInfo).port;
};

describe('network and address mistakes: one line naming the URL and what to do', () => {
  const servers: Server[] = [];
  after(() => {
    for (const s of servers) s.close();
  });

  test('a stopped service: connection refused', async () => {
    const url = `http://127.0.0.1:${await freePort()}`;
    const { code, output } = await cli(['login', '--no-browser', '--url', url]);
    assert.equal(code, 1);
    assert.equal(
      output.trim(),
      `error: cannot reach the service at ${url} (connection refused): is it running? use --url`,
    );
  });

  test('https to an http service: it does not speak TLS, try http', async () => {
    const server = createHttpServer((_req, res) => res.end('{}'));
    servers.push(server);
    const port = await listen(server);
    const { code, output } = await cli(['login', '--no-browser', '--url', `https://127.0.0.1:${port}`]);
    assert.equal(code, 1);
    assert.equal(
      output.trim(),
      `error: cannot reach the service at https://127.0.0.1:${port} (it does not speak TLS): is it an http service? try --url http://127.0.0.1:${port}`,
    );
  });

  test('http to an https service: closed without an answer, try https; its self-signed certificate: not trusted', async () => {
    const server = createHttpsServer(await selfSignedTls('127.0.0.1'), (_req, res) => res.end('{}'));
    servers.push(server);
    const port = await listen(server);
    const plain = await cli(['login', '--no-browser', '--url', `http://127.0.0.1:${port}`]);
    assert.equal(plain.code, 1);
    assert.equal(
      plain.output.trim(),
      `error: cannot reach the service at http://127.0.0.1:${port} (the connection was closed without an answer): is it an https service? try --url https://127.0.0.1:${port}`,
    );
    const tls = await cli(['login', '--no-browser', '--url', `https://127.0.0.1:${port}`]);
    assert.equal(tls.code, 1);
    assert.match(
      tls.output.trim(),
      new RegExp(
        `^error: cannot reach the service at https://127\\.0\\.0\\.1:${port} \\(its TLS certificate is not trusted: [A-Z_]+\\): if a proxy inspects TLS, set NODE_EXTRA_CA_CERTS to its CA file; or check --url$`,
      ),
    );
  });

  test('an unknown host', async () => {
    const { code, output } = await cli([
      'login',
      '--no-browser',
      '--url',
      'http://acp-agent-test.invalid:8080',
    ]);
    assert.equal(code, 1);
    assert.match(
      output.trim(),
      /^error: cannot reach the service at http:\/\/acp-agent-test\.invalid:8080 \((unknown host acp-agent-test\.invalid\): check the host name, or use --url|the name acp-agent-test\.invalid could not be looked up\): is this machine offline\? check the network, or use --url)$/,
    );
  });

  test('a doubled /v1: the agent adds it itself', async () => {
    const { code, output } = await cli(['login', '--no-browser', '--url', 'http://127.0.0.1:8080/v1/']);
    assert.equal(code, 2);
    assert.equal(
      output.trim(),
      'error: --url http://127.0.0.1:8080/v1/ ends in /v1, which the agent adds itself: use --url http://127.0.0.1:8080',
    );
  });

  test('a URL without a scheme', async () => {
    const { code, output } = await cli(['login', '--no-browser', '--url', '127.0.0.1:8080']);
    assert.equal(code, 2);
    assert.equal(
      output.trim(),
      'error: --url "127.0.0.1:8080" has no scheme: use --url http://127.0.0.1:8080 (or https://…)',
    );
  });

  test('something that is not the API (a web page) on that address', async () => {
    const server = createHttpServer((_req, res) =>
      res.writeHead(200, { 'content-type': 'text/html' }).end('<html>'),
    );
    servers.push(server);
    const port = await listen(server);
    const { code, output } = await cli(['login', '--no-browser', '--url', `http://127.0.0.1:${port}`]);
    assert.equal(code, 1);
    assert.equal(
      output.trim(),
      `error: the service at http://127.0.0.1:${port} answered /v1/healthcheck with HTTP 200, not the API's JSON: is that the API's address (not the console's)? use --url`,
    );
  });
});

describe('with the service running', () => {
  let svc: TestService;
  before(async () => {
    svc = await startTestService('pglite', { dashboard_url: 'http://dashboard.test' });
  });
  after(async () => svc?.dispose());

  test('the password: never on the command line; ACP_PASSWORD, else a terminal prompt', async () => {
    const refused = await cli(['register', '--url', svc.url, '--email', TEST_ADMIN.email, '--password', 'x']);
    assert.equal(refused.code, 2);
    assert.match(
      refused.output,
      /^error: --password is not accepted: a password on the command line is visible/,
    );
    assert.match(refused.output, /Set ACP_PASSWORD instead, or leave it out to be asked in the terminal\./);

    const noTerminal = await cli(['register', '--url', svc.url, '--email', TEST_ADMIN.email]);
    assert.equal(noTerminal.code, 2);
    assert.equal(
      noTerminal.output.trim(),
      'error: --email needs a password: set ACP_PASSWORD, or run the command in a terminal to be asked for it',
    );

    const wrong = await cli(['register', '--url', svc.url, '--email', TEST_ADMIN.email], {
      ACP_PASSWORD: 'nope',
    });
    assert.equal(wrong.code, 1);
    assert.equal(wrong.output.trim(), `error: wrong email or password for ${svc.url} (invalid_credentials)`);

    const state = tempDir();
    const run = runAgentCli(['register', '--state', state, '--url', svc.url, '--email', TEST_ADMIN.email], {
      ACP_PASSWORD: TEST_ADMIN.password,
    });
    assert.equal(await run.exited, 0, run.output());
    assert.match(run.output(), /^Registered: device [0-9a-f-]{36} /);
  });

  test('a bad file names the file and the line, and what the service refused names the line too', async () => {
    const state = tempDir();
    const register = runAgentCli(
      ['register', '--state', state, '--url', svc.url, '--email', TEST_ADMIN.email],
      {
        ACP_PASSWORD: TEST_ADMIN.password,
      },
    );
    assert.equal(await register.exited, 0, register.output());
    const dir = tempDir();
    const run = async (args: string[]) => {
      const child = runAgentCli(['--state', state, ...args]);
      return { code: await child.exited, output: child.output().trim() };
    };

    const agents = join(dir, 'agents.json');
    writeFileSync(agents, '{ "agents": [\n  { "agentType": "claude-code", }\n] }\n');
    assert.deepEqual(await run(['inventory', '--file', agents]), {
      code: 1,
      output: `error: ${agents}:2:33: not valid JSON: Expected double-quoted property name`,
    });
    assert.deepEqual(await run(['inventory', '--file', join(dir, 'missing.json')]), {
      code: 1,
      output: `error: cannot read ${join(dir, 'missing.json')}: no such file`,
    });

    // Today: an event older than the retention window would be refused for its age (event_too_old).
    const day = new Date().toISOString().slice(0, 10);
    const event = (i: number, over = '') =>
      `{"event_id":"6f1f0a52-2b8c-4c61-9a43-0d4f3b1c9e0${i}","event_time":"${day}T00:00:0${i}Z","agent_type":"claude-code","mcp_name":"github","tool":"search_code","event_type":"invocation","result":"allowed"${over}}`;
    const events = join(dir, 'events.ndjson');
    writeFileSync(events, `${event(1)}\n\n${event(2)}\n{"event_id": tru}\n`);
    assert.deepEqual(await run(['send-events', '--file', events]), {
      code: 1,
      output: `error: ${events}:4:17: not valid JSON: Unexpected token '}'`,
    });
    writeFileSync(events, `${event(1)}\n\n${event(2)}\n${event(3, ',"result":"denied"')}\n`);
    const refused = await run(['send-events', '--file', events]);
    assert.equal(refused.code, 1);
    assert.match(
      refused.output,
      new RegExp(
        `^error: ${events.replace(/[.]/g, '\\.')}:4: the service refused this event: .*body\\.events\\[2\\]\\.deny_code: is required when result = denied`,
      ),
    );
  });
});
