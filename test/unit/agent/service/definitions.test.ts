// The service definitions `agent service install --root` writes, generated into a temporary root and read back by
// readers that are not ours: the plist by the `plist` npm parser and launchd.plist(5)'s keys, the Task Scheduler XML
// by libxml2 (xmllint-wasm) against Microsoft's task schema, the systemd unit by a strict reader written from
// systemd's manual pages (test/support/systemd-unit.ts). Each daemon command line must come back argument for
// argument, whatever a path holds (spaces, quotes, `%`, `$`, backslashes).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import fc from 'fast-check';
import { parse as parsePlist } from 'plist';
import { validateXML } from 'xmllint-wasm';
import { daemonCommand, type ServicePlatform } from '#agent/service/definition.ts';
import {
  findProgram,
  installService,
  type ServiceOptions,
  serviceDefinition,
  serviceStatus,
  underRoot,
  uninstallService,
} from '#agent/service/install.ts';
import { execArgument } from '#agent/service/systemd.ts';
import { windowsArgument } from '#agent/service/task-scheduler.ts';
import { checkLaunchdJob } from '#test/support/launchd-plist.ts';
import { runs } from '#test/support/runs.ts';
import { commandLine, isTimeSpan, parseUnit, UnitSyntaxError } from '#test/support/systemd-unit.ts';

const TASK_XSD = readFileSync(new URL('./task-scheduler.xsd', import.meta.url), 'utf8');
const roots: string[] = [];
after(() => {
  for (const root of roots) rmSync(root, { recursive: true, force: true });
});

const HOMES: Record<ServicePlatform, { home: string; node: string; script: string }> = {
  darwin: {
    home: "/Users/Jane O'Neil & Co",
    node: '/usr/local/bin/node',
    script: "/Users/Jane O'Neil & Co/Applications/acp agent/acp-agent.mjs",
  },
  linux: {
    home: '/home/jane doe',
    node: '/usr/bin/node',
    script: '/opt/acp agent/100%/$HOME "x"/acp-agent.mjs',
  },
  win32: {
    home: 'C:\\Users\\Jane Doe',
    node: 'C:\\Program Files\\nodejs\\node.exe',
    script: 'C:\\Program Files\\ACP Agent\\acp "agent".mjs',
  },
};

function specFor(platform: ServicePlatform, root: string): ServiceOptions {
  const { home, node, script } = HOMES[platform];
  const stateDir = platform === 'win32' ? `${home}\\.acp-agent` : `${home}/.acp-agent`;
  return {
    platform,
    home,
    stateDir,
    command: daemonCommand(node, script, stateDir),
    ...(platform === 'win32' ? { user: 'CORP\\jdoe' } : {}),
    root,
    env: {},
    print: () => {},
  };
}

function generate(platform: ServicePlatform): { spec: ServiceOptions; path: string; bytes: Buffer } {
  const root = mkdtempSync(join(tmpdir(), 'acp-service-'));
  roots.push(root);
  const spec = specFor(platform, root);
  const { path, registered } = installService(spec);
  assert.equal(registered, false, 'with --root nothing is registered');
  return { spec, path, bytes: readFileSync(path) };
}

/** CommandLineToArgvW's rules (Microsoft, "Parsing C++ command-line arguments"), for the round trip. */
function windowsArgv(line: string): string[] {
  const argv: string[] = [];
  let i = 0;
  while (i < line.length) {
    while (line[i] === ' ' || line[i] === '\t') i++;
    if (i >= line.length) break;
    let arg = '';
    let quoted = false;
    for (; i < line.length; i++) {
      const ch = line[i];
      if (!quoted && (ch === ' ' || ch === '\t')) break;
      if (ch === '\\') {
        let n = 0;
        while (line[i] === '\\') {
          n++;
          i++;
        }
        if (line[i] === '"') {
          arg += '\\'.repeat(Math.floor(n / 2));
          if (n % 2 === 1) arg += '"';
          else quoted = !quoted;
        } else {
          arg += '\\'.repeat(n);
          i--;
        }
        continue;
      }
      if (ch === '"') quoted = !quoted;
      else arg += ch;
    }
    argv.push(arg);
  }
  return argv;
}

describe('macOS LaunchAgent', () => {
  test('a launchd job with only documented keys, started at login and kept alive, running `agent run`', () => {
    const { spec, path, bytes } = generate('darwin');
    assert.equal(
      path,
      underRoot(spec.root as string, `${spec.home}/Library/LaunchAgents/com.acp.agent.plist`),
      'in ~/Library/LaunchAgents, named after its label',
    );
    const job = parsePlist(bytes.toString('utf8')) as Record<string, unknown>;
    assert.deepEqual(checkLaunchdJob(job), []);
    assert.equal(job.Label, 'com.acp.agent');
    assert.deepEqual(job.ProgramArguments, spec.command);
    assert.equal(job.RunAtLoad, true);
    assert.equal(job.KeepAlive, true);
    assert.equal(job.StandardErrorPath, `${spec.stateDir}/logs/service.log`);
  });

  test('the key check refuses what launchd would not take', () => {
    assert.match(checkLaunchdJob({ Label: 'x', ProgramArguments: ['a'], KeepAlve: true }).join(), /KeepAlve/);
    assert.match(
      checkLaunchdJob({ Label: 'x', ProgramArguments: ['a'], RunAtLoad: 'yes' }).join(),
      /RunAtLoad/,
    );
  });
});

describe('systemd user unit', () => {
  test('only documented directives, restarted on failure, ExecStart giving back the exact command', () => {
    const { spec, path, bytes } = generate('linux');
    assert.equal(path, underRoot(spec.root as string, `${spec.home}/.config/systemd/user/acp-agent.service`));
    const entries = parseUnit(bytes.toString('utf8'));
    const value = (key: string) => entries.find((e) => e.key === key)?.value;
    const exec = commandLine(value('ExecStart') ?? '');
    assert.equal(exec.prefixes, '');
    assert.deepEqual(exec.argv, spec.command);
    assert.ok(exec.argv[0]?.startsWith('/'), 'the executable is an absolute path');
    assert.ok(
      ['simple', 'exec', 'forking', 'oneshot', 'dbus', 'notify', 'notify-reload', 'idle'].includes(
        value('Type') ?? '',
      ),
    );
    assert.equal(value('Restart'), 'on-failure');
    for (const key of ['RestartSec', 'TimeoutStopSec'])
      assert.ok(isTimeSpan(value(key) ?? ''), `${key} is a time span`);
    assert.equal(value('WantedBy'), 'default.target');
    assert.match(value('KillSignal') ?? '', /^SIG[A-Z]+$/);
    const nice = Number(value('Nice'));
    assert.ok(Number.isInteger(nice) && nice >= -20 && nice <= 19);
  });

  test('XDG_CONFIG_HOME moves the unit where systemd --user looks for it', () => {
    const spec = specFor('linux', '/unused');
    assert.equal(
      serviceDefinition(spec, { XDG_CONFIG_HOME: '/cfg' }).path,
      '/cfg/systemd/user/acp-agent.service',
    );
  });

  test('systemd-analyze verify accepts it, where systemd-analyze exists (optional, in addition)', (t) => {
    const analyze = findProgram('systemd-analyze', process.env);
    if (!analyze) {
      t.diagnostic('systemd-analyze is not on this machine: the strict reader above is the check');
      return;
    }
    const { path } = generate('linux');
    const result = spawnSync(analyze, ['verify', '--user', path], { encoding: 'utf8' });
    // The script and node paths of the fixture do not exist here: only syntax and directive problems count.
    const problems = `${result.stderr}`
      .split('\n')
      .filter((l) => /Unknown|unknown|Invalid|invalid|syntax/i.test(l));
    assert.deepEqual(
      problems.filter((l) => !/is not executable|No such file|not found/i.test(l)),
      [],
    );
  });

  test('the reader refuses what systemd would not take', () => {
    assert.throws(() => parseUnit('[Service]\nRestartt=always\n'), UnitSyntaxError);
    assert.throws(() => parseUnit('[Servce]\nRestart=always\n'), UnitSyntaxError);
    assert.throws(() => parseUnit('Restart=always\n'), UnitSyntaxError);
    assert.throws(() => commandLine('/usr/bin/node "/a/100%/x"'), /specifier/);
    assert.throws(() => commandLine('/usr/bin/node "/a/$HOME/x"'), /variable/);
  });
});

describe('Windows Task Scheduler task', () => {
  test("valid against Microsoft's task schema, at logon, restarted on failure, giving back the exact command", async () => {
    const { spec, path, bytes } = generate('win32');
    assert.equal(path, underRoot(spec.root as string, `${spec.stateDir}\\acp-agent.task.xml`));
    assert.deepEqual(
      [...bytes.subarray(0, 2)],
      [0xff, 0xfe],
      'UTF-16LE with a byte order mark, as schtasks writes',
    );
    const result = await validateXML({
      xml: [{ fileName: 'acp-agent.task.xml', contents: new Uint8Array(bytes) }],
      schema: [{ fileName: 'task.xsd', contents: TASK_XSD }],
    });
    assert.deepEqual(result.errors, []);
    assert.equal(result.valid, true);
    const xml = bytes.subarray(2).toString('utf16le');
    const element = (name: string) =>
      (new RegExp(`<${name}>([^<]*)</${name}>`).exec(xml)?.[1] ?? '')
        .replace(/&quot;/g, '"')
        .replace(/&apos;/g, "'")
        .replace(/&lt;/g, '<')
        .replace(/&gt;/g, '>')
        .replace(/&amp;/g, '&');
    assert.equal(element('Command'), spec.command[0]);
    assert.deepEqual(windowsArgv(element('Arguments')), spec.command.slice(1));
    assert.match(xml, /<LogonTrigger>\s*<Enabled>true<\/Enabled>\s*<UserId>CORP\\jdoe<\/UserId>/);
    assert.match(xml, /<RestartOnFailure>\s*<Interval>PT1M<\/Interval>/);
  });

  test('the schema refuses what Task Scheduler would not take', async () => {
    const { bytes } = generate('win32');
    const text = bytes
      .subarray(2)
      .toString('utf16le')
      .replace('<Priority>7</Priority>', '<Priority>11</Priority>');
    const broken = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')]);
    const result = await validateXML({
      xml: [{ fileName: 'broken.xml', contents: new Uint8Array(broken) }],
      schema: [{ fileName: 'task.xsd', contents: TASK_XSD }],
    });
    assert.equal(result.valid, false);
    assert.match(result.errors.map((e) => e.message).join(), /Priority/);
  });
});

test('any argument survives each format: property over printable text', () => {
  const arg = fc.string({
    unit: fc.constantFrom('a', ' ', '"', "'", '\\', '%', '$', '&', '<', 'é', '\t', 'z'),
    minLength: 0,
  });
  fc.assert(
    fc.property(fc.array(arg, { minLength: 1, maxLength: 4 }), (args) => {
      assert.deepEqual(commandLine(['/usr/bin/node', ...args].map(execArgument).join(' ')).argv, [
        '/usr/bin/node',
        ...args,
      ]);
      assert.deepEqual(windowsArgv(args.map(windowsArgument).join(' ')), args);
      const root = '/unused';
      const spec = { ...specFor('darwin', root), command: ['/usr/bin/node', ...args] };
      const job = parsePlist(serviceDefinition(spec).contents.toString()) as { ProgramArguments: string[] };
      assert.deepEqual(job.ProgramArguments, ['/usr/bin/node', ...args]);
    }),
    { numRuns: runs(300) },
  );
});

test('uninstall removes what install wrote; status says whether it is there', () => {
  for (const platform of ['darwin', 'linux', 'win32'] as const) {
    const { spec, path } = generate(platform);
    const lines: string[] = [];
    const print = (line: string) => lines.push(line);
    assert.equal(serviceStatus({ ...spec, print }).installed, true);
    assert.match(lines.join('\n'), /installed \(/);
    assert.equal(uninstallService({ ...spec, print }).removed, true);
    assert.equal(existsSync(path), false);
    assert.equal(serviceStatus({ ...spec, print }).installed, false);
  }
});
