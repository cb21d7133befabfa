// The README's quick start and "Five minutes with it", run as a newcomer runs them, in that order: the shell blocks
// are read from README.md itself and run in bash, as written, in a fresh copy of the repository. The block that holds `npm start`
// is the first terminal (it keeps running); the others run, in order, in one second terminal. After each command,
// every `# =>` line must match a line the command printed (`…` stands for anything). A headless Chromium plays the
// person at the agent's browser sign-in: `login` opens the URL with the program named by BROWSER, which hands it to
// the test. When the README and the service disagree, this test fails.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { launchChromium } from '#test/support/browser.ts';
import { freePort } from '#test/support/free-port.ts';
import { type FreshCopy, freshCopy, PROJECT_ROOT } from '#test/support/fresh-copy.ts';

const README = readFileSync(join(PROJECT_ROOT, 'README.md'), 'utf8');

interface Step {
  /** The command lines, as written. */
  script: string;
  /** What it must print: one pattern per `# =>` line. */
  expect: string[];
  /** Where it starts in README.md, for messages. */
  line: number;
}

/** The ```sh blocks of a `## ` section, split into steps: the commands up to each run of `# =>` lines. */
function shellBlocks(section: string): Step[][] {
  const lines = README.split('\n');
  const start = lines.indexOf(`## ${section}`);
  assert.ok(start >= 0, `README.md has no section "## ${section}"`);
  const blocks: Step[][] = [];
  let steps: Step[] | undefined;
  let current: Step | undefined;
  for (let i = start + 1; i < lines.length && !lines[i]!.startsWith('## '); i++) {
    const line = lines[i]!;
    if (line.startsWith('```')) {
      if (steps) {
        if (current?.script.trim()) steps.push(current);
        blocks.push(steps);
        steps = undefined;
      } else if (line === '```sh') steps = [];
      current = undefined;
      continue;
    }
    if (!steps) continue;
    const expectation = /^# => (.*)$/.exec(line);
    if (expectation) {
      if (!current?.script.trim()) assert.fail(`README.md:${i + 1}: a "# =>" line with no command before it`);
      current.expect.push(expectation[1]!);
      continue;
    }
    if (current?.expect.length) {
      steps.push(current);
      current = undefined;
    }
    current ??= { script: '', expect: [], line: i + 1 };
    current.script += `${line}\n`;
  }
  return blocks;
}

/** `…` stands for anything; the rest is literal; the pattern matches a whole (trimmed) line. */
const patternOf = (expected: string) =>
  new RegExp(
    `^${expected
      .split('…')
      .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
      .join('.*')}$`,
  );

/** Each expectation matches a line of the output, in order. */
function assertPrinted(step: Step, output: string) {
  const printed = output.split('\n').map((l) => l.trim());
  let from = 0;
  for (const expected of step.expect) {
    const pattern = patternOf(expected);
    const at = printed.findIndex((l, i) => i >= from && pattern.test(l));
    assert.ok(
      at >= 0,
      `README.md:${step.line}: \`${step.script.trim().split('\n')[0]}\` should print\n  ${expected}\nbut printed:\n${output}`,
    );
    from = at + 1;
  }
}

let copy: FreshCopy;
let home: string;
let browser: Browser;
let server: ChildProcess | undefined;
let env: NodeJS.ProcessEnv;
const urlFile = () => join(home, 'opened-urls');

before(
  async () => {
    copy = freshCopy('acp-readme-');
    home = mkdtempSync(join(tmpdir(), 'acp-readme-home-'));
    // What `login` runs to open the sign-in page: it hands the URL to this test's browser.
    const opener = join(home, 'open-url');
    writeFileSync(opener, `#!/bin/sh\nprintf '%s\\n' "$1" >> '${urlFile()}'\n`);
    chmodSync(opener, 0o755);
    env = {
      PATH: process.env.PATH ?? '',
      HOME: home,
      TZ: 'UTC',
      PORT: String(await freePort()),
      BROWSER: opener,
    };
    browser = await launchChromium();
  },
  { timeout: 60_000 },
);

after(async () => {
  if (server?.pid && server.exitCode === null) {
    process.kill(-server.pid, 'SIGTERM');
    await once(server, 'exit');
  }
  await browser?.close();
  copy?.remove();
  if (home) rmSync(home, { recursive: true, force: true });
});

/** The person at the browser: opens what `login` opened, signs in as the admin the README chose, and approves. */
async function signInWhenAsked(password: string, done: Promise<unknown>): Promise<number> {
  let handled = 0;
  let finished = false;
  void done.finally(() => {
    finished = true;
  });
  while (!finished) {
    const urls = existsSync(urlFile()) ? readFileSync(urlFile(), 'utf8').split('\n').filter(Boolean) : [];
    for (const url of urls.slice(handled)) {
      const page = await browser.newPage();
      await page.goto(url);
      await page.fill('#email', 'admin@localhost');
      await page.fill('#password', password);
      await page.click('#sign-in-button');
      await page.click('#approve-cli');
      await page.waitForURL(/^http:\/\/127\.0\.0\.1:\d+\/callback\?/);
      await page.close();
      handled++;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return handled;
}

/** A terminal running `script` in its own process group, once it has printed `ready`. */
async function terminal(script: string, ready: RegExp) {
  const child = spawn('bash', ['-eo', 'pipefail', '-c', script], {
    cwd: copy.dir,
    env,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const collect = (d: Buffer) => {
    output += d.toString();
  };
  child.stdout!.on('data', collect);
  child.stderr!.on('data', collect);
  const deadline = Date.now() + 60_000;
  while (!ready.test(output)) {
    assert.ok(child.exitCode === null, `\`${script.trim()}\` exited ${child.exitCode}:\n${output}`);
    assert.ok(Date.now() < deadline, `\`${script.trim()}\` did not come up:\n${output}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return { child, output: () => output };
}

test('the README quick start and walkthrough run as written and print what the README shows', {
  timeout: 5 * 60_000,
}, async () => {
  // The two commands: `npm ci` is what the fresh copy's linked packages stand for (bench:newcomer times a real one),
  // `npm start` is the first terminal below, and `npm test` is the run this test is part of.
  const [quickStart, ...others] = shellBlocks('The two commands');
  assert.equal(others.length, 0);
  const commands = quickStart!
    .map((s) => s.script)
    .join('')
    .split('\n')
    .map((l) => l.replace(/#.*$/, '').trim())
    .filter(Boolean);
  assert.deepEqual(commands, ['npm ci && npm start', 'npm test']);

  // A reader runs the two commands first: `npm start` makes up the admin's password and prints it once. Then they
  // stop it (Ctrl-C) and go on with the walkthrough, which must work from that state.
  const twoCommands = await terminal('npm start', /admin created: admin@localhost \/ \S+/);
  process.kill(-(twoCommands.child.pid as number), 'SIGINT');
  await once(twoCommands.child, 'exit');

  const blocks = shellBlocks('Five minutes with it');
  const first = blocks.findIndex((steps) => steps.some((s) => /^npm start$/m.test(s.script)));
  assert.ok(first >= 0, 'no block starts the service with `npm start`');
  const [startBlock] = blocks.splice(first, 1);

  // Terminal 1: the service, in its own process group, until the test ends.
  const startScript = startBlock!.map((s) => s.script).join('');
  const service = await terminal(startScript, /listening on/);
  server = service.child;
  const serverOutput = service.output();
  for (const step of startBlock!) assertPrinted(step, serverOutput);
  const password = /^export SVC_ADMIN_PASSWORD='([^']+)'$/m.exec(startScript)?.[1];
  assert.ok(password, 'the npm start block chooses the admin password with export SVC_ADMIN_PASSWORD=…');

  // Terminal 2: every other block, in order, in one shell; a marker after each step tells the outputs apart.
  const steps = blocks.flat();
  const marker = (i: number) => `@@readme-step-${i}@@`;
  const script = steps.map((step, i) => `${step.script}printf '\\n%s\\n' '${marker(i)}'\n`).join('');
  const shell = spawn('bash', ['-eo', 'pipefail', '-c', script], {
    cwd: copy.dir,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  shell.stdout.on('data', (d: Buffer) => {
    output += d.toString();
  });
  let errors = '';
  shell.stderr.on('data', (d: Buffer) => {
    errors += d.toString();
  });
  const exited = once(shell, 'exit').then(([code]) => code as number | null);
  const signIns = await signInWhenAsked(password, exited);
  const code = await exited;

  let rest = output;
  for (const [i, step] of steps.entries()) {
    const end = rest.indexOf(marker(i));
    assert.ok(
      end >= 0,
      `README.md:${step.line}: this step failed (bash exited ${code}):\n${step.script}\nit printed:\n${rest}\n${errors.slice(-3000)}`,
    );
    assertPrinted(step, rest.slice(0, end));
    rest = rest.slice(end + marker(i).length);
  }
  assert.equal(code, 0, errors);
  assert.equal(signIns, 1, 'the walkthrough signs the agent in through the browser once');
});
