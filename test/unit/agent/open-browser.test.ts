// `login` opens the sign-in URL with the program named by BROWSER when it is set (git's, gh's and Python's
// convention), which is also how the README test hands the URL to its headless browser.
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { openInSystemBrowser } from '#agent/login.ts';

const dir = mkdtempSync(join(tmpdir(), 'acp-browser-'));
after(() => rmSync(dir, { recursive: true, force: true }));

test('BROWSER names the program that is given the URL', async () => {
  const opener = join(dir, 'opener');
  const seen = join(dir, 'seen');
  writeFileSync(opener, `#!/bin/sh\nprintf '%s' "$1" > '${seen}'\n`);
  chmodSync(opener, 0o755);
  const url = 'http://127.0.0.1:8080/v1/auth/cli/authorize?state=a&code_challenge=b';
  assert.equal(await openInSystemBrowser(url, opener), true);
  for (let i = 0; i < 50; i++) {
    try {
      if (readFileSync(seen, 'utf8') === url) return;
    } catch {}
    await new Promise((r) => setTimeout(r, 20));
  }
  assert.fail('the BROWSER program was not given the URL');
});

test('a BROWSER that cannot run is reported as not opened (the URL is printed anyway)', async () => {
  assert.equal(await openInSystemBrowser('http://127.0.0.1/', join(dir, 'no-such-program')), false);
});
