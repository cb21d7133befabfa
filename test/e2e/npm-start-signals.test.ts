// `npm start` stops when its own process is sent SIGTERM, as a process manager or `kill <pid>` does: npm passes the
// signal to the script's process, which must be the server itself (the start script execs it). Before, the script's
// shell took the signal and the server lived on under PID 1, still holding the port.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { connect } from 'node:net';
import { after, test } from 'node:test';
import { PROJECT_ROOT } from '#test/support/fresh-copy.ts';

let group: number | undefined;
after(() => {
  // Whatever a failed run left behind: the process group this test started, by its id.
  if (group !== undefined && alive(group)) process.kill(-group, 'SIGKILL');
});

/** Whether any process of the group is still there. */
function alive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

const accepts = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });

test('kill -TERM <npm start pid>: the server stops, the port is free, and no process of it survives', {
  timeout: 180_000,
}, async () => {
  // As a person starts it, in a process group of its own (as a terminal gives it), on an embedded database.
  const npm: ChildProcess = spawn('npm', ['start'], {
    cwd: PROJECT_ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      SVC_DB_DSN: 'pglite:memory',
      PORT: '0',
    },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  group = npm.pid;
  let output = '';
  const collect = (d: Buffer) => {
    output += d.toString();
  };
  npm.stdout?.on('data', collect);
  npm.stderr?.on('data', collect);
  const deadline = Date.now() + 150_000;
  let port: number | undefined;
  while (port === undefined) {
    assert.ok(npm.exitCode === null, `npm start exited ${npm.exitCode}:\n${output}`);
    assert.ok(Date.now() < deadline, `npm start did not come up:\n${output}`);
    const m = /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(output);
    if (m) port = Number(m[1]);
    else await new Promise((r) => setTimeout(r, 100));
  }
  assert.equal(await accepts(port), true);

  const exited = once(npm, 'exit');
  process.kill(npm.pid as number, 'SIGTERM');
  await exited;
  // npm waits for its script to end; give a straggler a moment all the same.
  for (let i = 0; i < 20 && alive(group as number); i++) await new Promise((r) => setTimeout(r, 100));
  assert.equal(alive(group as number), false, `a process of npm start survived SIGTERM to npm:\n${output}`);
  assert.equal(await accepts(port), false, 'the port is free');
  assert.match(output, /"message":"shutting down".*"signal":"SIGTERM"/);
});
