// npm run bench:agent [-- section…] — the endpoint agent on a laptop: one function per section, each printing its
// figures against a baseline measured in the same run. With no argument every section runs.
//
// - scan: `scanMachine` on a home with 8 clients and 200 projects, against reading the same files and nothing else.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { CLIENTS } from '#agent/clients/index.ts';
import { scanMachine } from '#agent/discovery/scan.ts';

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
const p95 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.ceil(xs.length * 0.95) - 1] as number;

function write(path: string, text: string) {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
}

/** A home with every client of agent/clients configured, and `projects` projects recorded by Claude Code. */
function laptopHome(projects: number): string {
  const home = mkdtempSync(join(tmpdir(), 'bench-agent-'));
  const stdio = (i: number) => ({
    command: 'npx',
    args: ['-y', `@acme/mcp-${i % 9}@1.${i}.0`, `--key=k${i}`],
    env: { TOKEN: `t${i}` },
  });
  const remote = (i: number) => ({ type: 'http', url: `https://mcp${i % 5}.example.com/v1/mcp?k=${i}` });
  const servers = (n: number, offset = 0) =>
    Object.fromEntries(
      Array.from({ length: n }, (_, i) => [`srv-${i}`, i % 2 ? remote(i + offset) : stdio(i + offset)]),
    );
  const dirs = Array.from({ length: projects }, (_, i) => join(home, 'src', `project-${i}`));
  write(
    join(home, '.claude.json'),
    JSON.stringify({
      mcpServers: servers(6),
      projects: Object.fromEntries(
        dirs.map((d, i) => [d, { allowedTools: [], mcpServers: servers(i % 3, i) }]),
      ),
    }),
  );
  write(
    join(home, '.config', 'Claude', 'claude_desktop_config.json'),
    JSON.stringify({ mcpServers: servers(4) }),
  );
  write(join(home, '.cursor', 'mcp.json'), JSON.stringify({ mcpServers: servers(5) }));
  write(
    join(home, '.config', 'Code', 'User', 'mcp.json'),
    `// user servers\n${JSON.stringify({ servers: servers(5) }, null, 2)}`,
  );
  write(join(home, '.codeium', 'windsurf', 'mcp_config.json'), JSON.stringify({ mcpServers: servers(4) }));
  write(
    join(home, '.codex', 'config.toml'),
    '[mcp_servers.docs]\ncommand = "npx"\nargs = ["-y", "@upstash/context7-mcp"]\n',
  );
  write(join(home, '.gemini', 'settings.json'), JSON.stringify({ mcpServers: servers(3) }));
  write(
    join(home, '.config', 'zed', 'settings.json'),
    `// zed\n${JSON.stringify({ context_servers: servers(3) }, null, 2)}`,
  );
  dirs.forEach((dir, i) => {
    // Each project uses a few of the clients, as repositories do.
    write(join(dir, '.mcp.json'), JSON.stringify({ mcpServers: servers(2, i) }));
    if (i % 2 === 0) write(join(dir, '.cursor', 'mcp.json'), JSON.stringify({ mcpServers: servers(2, i) }));
    if (i % 3 === 0) write(join(dir, '.vscode', 'mcp.json'), JSON.stringify({ servers: servers(2, i) }));
    if (i % 5 === 0)
      write(join(dir, '.gemini', 'settings.json'), JSON.stringify({ mcpServers: servers(1, i) }));
    if (i % 7 === 0)
      write(join(dir, '.codex', 'config.toml'), `[mcp_servers.p${i}]\nurl = "https://x.example/${i}"\n`);
  });
  return home;
}

async function scanSection() {
  const PROJECTS = 200;
  const RUNS = 15;
  const home = laptopHome(PROJECTS);
  try {
    const options = { home, platform: 'linux' as const, env: {}, systemRoot: home };
    const first = await scanMachine(options);
    const files = first.watchedPaths;
    const servers = first.clients.reduce((n, c) => n + c.servers.length, 0);
    // The baseline: the same files read (those absent fail as they do for the scan), 64 at a time, nothing parsed.
    const readOnly = async () => {
      const queue = [...files];
      await Promise.all(
        Array.from({ length: 64 }, async () => {
          for (let f = queue.pop(); f; f = queue.pop()) await readFile(f).catch(() => undefined);
        }),
      );
    };
    // Wall time, and the process's CPU time (user + system), which a busy shared machine disturbs less.
    const timed = async (run: () => Promise<unknown>) => {
      const cpu = process.cpuUsage();
      const t = performance.now();
      await run();
      const used = process.cpuUsage(cpu);
      return { wall: performance.now() - t, cpu: (used.user + used.system) / 1000 };
    };
    type Run = { wall: number; cpu: number };
    const scans: Run[] = [];
    const reads: Run[] = [];
    for (let i = 0; i < RUNS; i++) {
      reads.push(await timed(readOnly));
      scans.push(await timed(() => scanMachine(options)));
    }
    const wall = (runs: Run[]) => runs.map((r) => r.wall);
    const cpu = (runs: Run[]) => runs.map((r) => r.cpu);
    const line = (runs: Run[]) =>
      `wall median ${median(wall(runs)).toFixed(1)} ms (p95 ${p95(wall(runs)).toFixed(1)}), CPU median ${median(cpu(runs)).toFixed(1)} ms`;
    console.log(
      `\nscan — ${first.clients.length} clients (of ${CLIENTS.length}), ${PROJECTS} projects, ${files.length} paths looked at, ${servers} servers, ${RUNS} runs`,
    );
    console.log(`  read the same files only: ${line(reads)}`);
    console.log(`  scanMachine:              ${line(scans)}`);
    console.log(
      `  scan / read (medians): wall ${(median(wall(scans)) / median(wall(reads))).toFixed(2)}×, CPU ${(median(cpu(scans)) / median(cpu(reads))).toFixed(2)}×`,
    );
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}

/** The sections, by name: the hook's latency, the spool and the daemon add theirs here. */
const SECTIONS: Record<string, () => Promise<void>> = {
  scan: scanSection,
};

const wanted = process.argv.slice(2);
for (const name of wanted)
  if (!SECTIONS[name]) throw new Error(`no section ${name}: ${Object.keys(SECTIONS).join(', ')}`);
console.log(`bench:agent — Node ${process.version}, ${process.platform}`);
for (const [name, run] of Object.entries(SECTIONS))
  if (wanted.length === 0 || wanted.includes(name)) await run();
