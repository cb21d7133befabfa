// The local sign-in password: from ACP_PASSWORD, else typed at a terminal prompt that echoes nothing.
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { test } from 'node:test';
import { readPassword } from '#agent/password.ts';

/** A terminal as the prompt sees it: a readable stream with isTTY and raw mode, and what was written back. */
function terminal() {
  const input = new PassThrough() as PassThrough & {
    isTTY: boolean;
    isRaw: boolean;
    setRawMode(on: boolean): void;
  };
  input.isTTY = true;
  input.isRaw = false;
  const modes: boolean[] = [];
  input.setRawMode = (on: boolean) => {
    modes.push(on);
    input.isRaw = on;
  };
  const output = new PassThrough();
  let written = '';
  output.on('data', (d) => {
    written += d;
  });
  return { input, output, modes, written: () => written };
}

test('typed at the prompt: nothing echoed, backspace honoured, raw mode restored', async () => {
  const t = terminal();
  const read = readPassword('admin@example.test', {
    env: {},
    input: t.input,
    output: t.output,
  });
  t.input.write('s3cr');
  t.input.write('\u007fet horse\r');
  assert.equal(await read, 's3cet horse');
  assert.equal(t.written(), 'Password for admin@example.test: \n');
  assert.deepEqual(t.modes, [true, false]);
});

test('Ctrl-C cancels the prompt', async () => {
  const t = terminal();
  const read = readPassword('a@b.test', {
    env: {},
    input: t.input,
    output: t.output,
  });
  t.input.write('abc\u0003');
  await assert.rejects(read, /cancelled/);
});

test('ACP_PASSWORD first; without it and without a terminal, none', async () => {
  const t = terminal();
  assert.equal(
    await readPassword('a@b.test', {
      env: { ACP_PASSWORD: 'from-env' },
      input: t.input,
      output: t.output,
    }),
    'from-env',
  );
  assert.equal(t.written(), '', 'no prompt');
  const notTty = Object.assign(new PassThrough(), { isTTY: false, isRaw: false, setRawMode: () => notTty });
  assert.equal(await readPassword('a@b.test', { env: {}, input: notTty, output: t.output }), undefined);
});
