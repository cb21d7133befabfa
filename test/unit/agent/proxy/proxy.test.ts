// The MCP proxy between the real MCP SDK client and the reference "everything" server from npm, and its core on raw
// bytes: what passes is unchanged, each tools/call is one spooled event (ok, error, denied, audited, cancelled), and
// tools/list gives the definition hashes the inventory reports.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { savePolicyCache } from '#agent/hooks/policy.ts';
import { McpProxy } from '#agent/proxy/proxy.ts';
import { readToolHashes } from '#agent/proxy/tool-hashes.ts';
import { spooledEvents } from '#test/support/hook-runner.ts';
import { until } from '#test/support/until.ts';

type Event = Record<string, unknown> & { metadata: Record<string, unknown> };
const ENTRY = fileURLToPath(new URL('../../../../agent/proxy/entry.ts', import.meta.url));
const EVERYTHING = fileURLToPath(
  import.meta.resolve('@modelcontextprotocol/server-everything/dist/index.js' as string),
);
const dirs: string[] = [];
after(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});
const stateDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'mcp-proxy-'));
  dirs.push(dir);
  return dir;
};

function withPolicy(dir: string): void {
  const now = Date.now();
  savePolicyCache(dir, {
    version: 3,
    etag: '"3-a"',
    fetchedAt: now,
    checkedAt: now,
    policy: {
      rules: [
        {
          id: 'no-sums',
          effect: 'deny',
          mode: 'enforce',
          match: { tool: 'get-sum' },
          reason: 'Sums are not approved here.',
        },
        {
          id: 'watch-echo',
          effect: 'deny',
          mode: 'audit',
          match: { server: 'everything', tool: 'echo' },
          reason: 'Echo will be refused soon.',
        },
      ],
      default: { effect: 'allow', reason: 'No rule applies.' },
      no_cache: 'open',
    },
  });
}

async function connect(dir: string) {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [
      ENTRY,
      'mcp-proxy',
      '--client',
      'claude-desktop',
      '--server',
      'everything',
      '--state',
      dir,
      '--',
      process.execPath,
      EVERYTHING,
      'stdio',
    ],
    stderr: 'ignore',
  });
  const client = new Client({ name: 'proxy-test', version: '1.0.0' });
  await client.connect(transport);
  return client;
}

test('through the proxy, the SDK client lists and calls the everything server; each call is one event', async () => {
  const dir = stateDir();
  withPolicy(dir);
  const client = await connect(dir);
  try {
    const { tools } = await client.listTools();
    const echo = tools.find((t) => t.name === 'echo');
    assert.ok(echo, 'the server lists echo');

    // tools/list: one hash per tool over {name, description, inputSchema} in canonical JSON, and no text kept.
    // The proxy answers the client first and writes the file beside it: wait for it.
    const hashes = await until('the tool hashes file', () =>
      readToolHashes(dir, 'claude-desktop', 'everything'),
    );
    assert.deepEqual(hashes?.map((h) => h.name).sort(), tools.map((t) => t.name).sort());
    const sorted = (v: unknown): unknown =>
      Array.isArray(v)
        ? v.map(sorted)
        : v && typeof v === 'object'
          ? Object.fromEntries(
              Object.keys(v)
                .sort()
                .map((k) => [k, sorted((v as Record<string, unknown>)[k])]),
            )
          : v;
    const expected = createHash('sha256')
      .update(
        JSON.stringify(
          sorted({ description: echo.description, inputSchema: echo.inputSchema, name: 'echo' }),
        ),
      )
      .digest('hex');
    assert.equal(hashes?.find((h) => h.name === 'echo')?.hash, expected);

    // An allowed call (audited: reported as would-deny), with progress passing through.
    const progress: number[] = [];
    const long = await client.callTool(
      { name: 'trigger-long-running-operation', arguments: { duration: 0.2, steps: 2 } },
      undefined,
      { onprogress: (p) => progress.push(p.progress) },
    );
    // Progress passes through, in order. On a loaded machine a CI run saw the call's answer before the last step's
    // notification (the SDK stops listening for progress at the answer): at least the first one arrives.
    assert.ok(progress.length >= 1 && progress.every((p, i) => p === i + 1), `progress: ${progress}`);
    assert.match(JSON.stringify(long.content), /Long running operation completed/);
    const echoed = await client.callTool({ name: 'echo', arguments: { message: 'héllo' } });
    assert.match(JSON.stringify(echoed.content), /héllo/);

    // An error: a tool the server does not have.
    const missing = await client.callTool({ name: 'no-such-tool', arguments: {} }).then(
      (r) => r,
      (err: Error) => ({ thrown: err.message }),
    );
    assert.ok('thrown' in missing || missing.isError === true, 'the server refused the unknown tool');

    // A denied call: answered by the proxy as a tool execution error carrying the reason.
    const denied = await client.callTool({ name: 'get-sum', arguments: { a: 1, b: 2 } });
    assert.equal(denied.isError, true);
    assert.deepEqual(denied.content, [{ type: 'text', text: 'Sums are not approved here.' }]);

    // A cancelled call: the SDK's notifications/cancelled goes through, the call is reported without outcome.
    const controller = new AbortController();
    const pending = client.callTool(
      { name: 'trigger-long-running-operation', arguments: { duration: 5, steps: 5 } },
      undefined,
      { signal: controller.signal },
    );
    setTimeout(() => controller.abort('changed my mind'), 100);
    await assert.rejects(pending);
    // The server still answers after the cancellation: the conversation is intact.
    const again = await client.callTool({
      name: 'get-annotated-message',
      arguments: { messageType: 'success' },
    });
    assert.ok(Array.isArray(again.content));
  } finally {
    await client.close();
  }
  await new Promise((r) => setTimeout(r, 200));
  const events = spooledEvents<Event>(dir);
  const byTool = (tool: string) => events.filter((e) => e.tool === tool);
  assert.equal(events.length, 6, JSON.stringify(events.map((e) => [e.tool, e.result, e.event_type])));
  for (const e of events) {
    assert.equal(e.agent_type, 'claude-desktop');
    assert.equal(e.mcp_name, 'everything');
    assert.equal(e.metadata.source, 'proxy');
  }
  const [longOk, cancelled] = byTool('trigger-long-running-operation');
  assert.equal(longOk?.result, 'allowed');
  assert.equal(longOk?.event_type, 'result');
  assert.ok(typeof longOk?.duration_ms === 'number' && longOk.duration_ms >= 150);
  assert.equal(cancelled?.event_type, 'invocation');
  assert.equal(cancelled?.metadata.cancelled, true);
  const [echoEvent] = byTool('echo');
  assert.equal(echoEvent?.result, 'allowed');
  assert.equal(echoEvent?.deny_code, 'policy_would_deny');
  assert.equal(echoEvent?.rule_applied, 'watch-echo@3');
  assert.equal(echoEvent?.metadata.tool_input, undefined, 'no input without the opt-in');
  const [missingEvent] = byTool('no-such-tool');
  assert.equal(missingEvent?.result, 'error');
  assert.equal(typeof missingEvent?.error_message, 'string');
  const [deniedEvent] = byTool('get-sum');
  assert.equal(deniedEvent?.result, 'denied');
  assert.equal(deniedEvent?.deny_code, 'policy_denied');
  assert.equal(deniedEvent?.deny_reason, 'Sums are not approved here.');
  assert.equal(deniedEvent?.rule_applied, 'no-sums@3');
  assert.equal(byTool('get-annotated-message')[0]?.result, 'allowed');
});

test('the core passes bytes on unchanged both ways, and answers a denied call itself', () => {
  const dir = stateDir();
  withPolicy(dir);
  const toServer: Buffer[] = [];
  const toClient: Buffer[] = [];
  const proxy = new McpProxy(
    { stateDir: dir, clientId: 'vscode', server: 'everything' },
    (b) => toServer.push(Buffer.from(b)) > 0,
    (b) => toClient.push(Buffer.from(b)) > 0,
  );
  // Odd spacing, escapes and key order that a re-serialization would change, split across chunks.
  const call =
    '{ "method" : "tools/call", "jsonrpc":"2.0","id":"a\\u0031","params":{"name":"echo","arguments":{"message":"\\u00e9"}}}\n';
  const cancel =
    '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"a1","reason":"x"}}\n';
  const other = '{"jsonrpc":"2.0","id":7,"method":"resources/list","params":{}}\n';
  const input = Buffer.from(call + other + cancel);
  for (let i = 0; i < input.length; i += 13) proxy.fromClient(input.subarray(i, i + 13));
  assert.equal(Buffer.concat(toServer).toString(), call + other + cancel);
  const reply = '{"result":{"content":[{"type":"text","text":"\\u00e9"}]},"jsonrpc":"2.0","id":"a1"}\n';
  const progress =
    '{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}\n';
  const served = Buffer.from(progress + reply);
  for (let i = 0; i < served.length; i += 7) proxy.fromServer(served.subarray(i, i + 7));
  assert.equal(Buffer.concat(toClient).toString(), progress + reply);

  toServer.length = 0;
  toClient.length = 0;
  proxy.fromClient(
    Buffer.from('{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"get-sum"}}\n'),
  );
  assert.equal(toServer.length, 0, 'the denied call never reaches the server');
  assert.deepEqual(JSON.parse(Buffer.concat(toClient).toString()), {
    jsonrpc: '2.0',
    id: 9,
    result: { content: [{ type: 'text', text: 'Sums are not approved here.' }], isError: true },
  });
  const events = spooledEvents<Event>(dir);
  assert.deepEqual(
    events.map((e) => [e.tool, e.event_type, e.result]),
    [
      ['echo', 'invocation', 'allowed'],
      ['get-sum', 'result', 'denied'],
    ],
  );
});

test('a long-lived proxy decides with the policy the daemon saved last', () => {
  const dir = stateDir();
  withPolicy(dir);
  const toServer: Buffer[] = [];
  const proxy = new McpProxy(
    { stateDir: dir, clientId: 'zed', server: 'everything' },
    (b) => toServer.push(b) > 0,
    () => true,
  );
  const sum = (id: number) =>
    Buffer.from(`{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"get-sum"}}\n`);
  proxy.fromClient(sum(1));
  assert.equal(toServer.length, 0);
  const now = Date.now();
  savePolicyCache(dir, {
    version: 4,
    etag: '"4-b"',
    fetchedAt: now,
    checkedAt: now,
    policy: { rules: [], default: { effect: 'allow', reason: 'Open.' }, no_cache: 'open' },
  });
  proxy.fromClient(sum(2));
  assert.equal(toServer.length, 1, 'version 4 allows the call');
  proxy.fromServer(Buffer.from('{"jsonrpc":"2.0","id":2,"error":{"code":-32603,"message":"boom"}}\n'));
  const [denied, failed] = spooledEvents<Event>(dir);
  assert.equal(denied?.rule_applied, 'no-sums@3');
  assert.equal(failed?.result, 'error');
  assert.equal(failed?.error_message, 'boom');
  assert.equal(failed?.rule_applied, 'default@4');
});

test('a JSON-RPC batch: its denied call is answered by the proxy, the rest goes on', () => {
  const dir = stateDir();
  withPolicy(dir);
  const toServer: Buffer[] = [];
  const toClient: Buffer[] = [];
  const proxy = new McpProxy(
    { stateDir: dir, clientId: 'vscode', server: 'everything' },
    (b) => toServer.push(b) > 0,
    (b) => toClient.push(b) > 0,
  );
  const echo = {
    jsonrpc: '2.0',
    id: 1,
    method: 'tools/call',
    params: { name: 'echo', arguments: { message: 'x' } },
  };
  const sum = { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'get-sum' } };
  proxy.fromClient(Buffer.from(`${JSON.stringify([echo, sum])}\n`));
  assert.deepEqual(JSON.parse(Buffer.concat(toServer).toString()), [echo]);
  assert.equal(JSON.parse(Buffer.concat(toClient).toString()).id, 2);
  // A batch with nothing denied goes on as it came.
  toServer.length = 0;
  const allowed = `[ ${JSON.stringify({ ...echo, id: 3 })} ]\n`;
  proxy.fromClient(Buffer.from(allowed));
  assert.equal(Buffer.concat(toServer).toString(), allowed);
});
