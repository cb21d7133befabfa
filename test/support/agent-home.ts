// A laptop's home for the endpoint agent's tests: the vendor-documented fixtures (test/fixtures/agent) copied to a
// temporary directory, with `__HOME__` written as the copy's real path (the clients record absolute paths).
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const AGENT_FIXTURES = fileURLToPath(new URL('../fixtures/agent/', import.meta.url));

/** Every `S3CR3T-…` marker planted in the fixtures (what must never reach the wire). */
export const SECRET_MARKER = /S3CR3T-[A-Za-z0-9-]+/g;

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

export interface FixtureHome {
  /** The home directory (a copy of fixtures/agent/home). */
  home: string;
  /** The system root holding etc/claude-code and etc/gemini-cli (a copy of fixtures/agent/root). */
  root: string;
  /** Every marker planted in the files of the copy. */
  secrets: string[];
  dispose(): void;
}

export function fixtureHome(): FixtureHome {
  const dir = mkdtempSync(join(tmpdir(), 'agent-home-'));
  const home = join(dir, 'home');
  const root = join(dir, 'root');
  cpSync(join(AGENT_FIXTURES, 'home'), home, { recursive: true });
  cpSync(join(AGENT_FIXTURES, 'root'), root, { recursive: true });
  const secrets = new Set<string>();
  for (const file of [...filesUnder(home), ...filesUnder(root)]) {
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(SECRET_MARKER)) secrets.add(m[0]);
    if (text.includes('__HOME__')) writeFileSync(file, text.replaceAll('__HOME__', home));
  }
  return { home, root, secrets: [...secrets], dispose: () => rmSync(dir, { recursive: true, force: true }) };
}
