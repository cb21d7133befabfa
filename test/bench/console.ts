// npm run bench:console — the admin console's size as a browser downloads it: every script the page loads, minified
// and gzipped (goal: at most 150 KB of JavaScript in total), the stylesheet, what the script is made of, and how
// long the build takes (the local server builds it at the first request for /console/, not at start). With --pages it
// then measures each page on a large data set in Chromium (test/bench/console-pages.ts). Exits non-zero when a goal
// it prints fails (the size here, a page's time to first data there).
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { buildConsole } from '#console/build.ts';

const GOAL_KB = 150;
const times: number[] = [];
let build = await buildConsole();
for (let i = 0; i < 5; i++) {
  const started = performance.now();
  build = await buildConsole();
  times.push(performance.now() - started);
}
const kb = (bytes: number) => (bytes / 1024).toFixed(1);
const gzip = (body: Uint8Array) => gzipSync(body, { level: 9 }).length;
const rows = [...build.assets].map(([name, a]) => ({
  name,
  js: a.contentType.startsWith('text/javascript'),
  raw: a.body.length,
  gz: gzip(a.body),
  br: brotliCompressSync(a.body, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }).length,
}));
const scripts = [...build.html.matchAll(/<script[^>]*\bsrc="\/console\/assets\/([^"]+)"/g)].map((m) => m[1]);
const js = rows.filter((r) => r.js);
// Every script the page loads is a built asset (a script the bench did not count would make the total a lie).
for (const name of scripts) if (!js.some((r) => r.name === name)) throw new Error(`unbuilt script ${name}`);
const totalGz = js.reduce((n, r) => n + r.gz, 0);
const sizePass = totalGz <= GOAL_KB * 1024;

const byPackage = new Map<string, number>();
for (const [input, bytes] of Object.entries(build.scriptInputs)) {
  const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(input);
  const key = m ? (m[1] as string) : input.startsWith('client/') ? 'client/ (the API client)' : 'console/src';
  byPackage.set(key, (byPackage.get(key) ?? 0) + bytes);
}
const median = [...times].sort((a, b) => a - b)[Math.floor(times.length / 2)] as number;

console.log('\nbench:console — the admin console as served under /console/ (esbuild, minified ESM)\n');
console.log('| Asset (name with its content hash) | Minified (KB) | Gzipped (KB) | Brotli (KB), as sent |');
console.log('|---|---:|---:|---:|');
for (const r of rows) console.log(`| ${r.name} | ${kb(r.raw)} | ${kb(r.gz)} | ${kb(r.br)} |`);
console.log('\n| In the script | Minified (KB) |');
console.log('|---|---:|');
for (const [name, bytes] of [...byPackage].sort((a, b) => b[1] - a[1]))
  console.log(`| ${name} | ${kb(bytes)} |`);
console.log(
  `\nTotal JavaScript, gzipped: ${kb(totalGz)} KB (${scripts.length} script${scripts.length === 1 ? '' : 's'}); goal ≤ ${GOAL_KB} KB: ${sizePass ? 'PASS' : 'FAIL'}`,
);
if (!sizePass) process.exitCode = 1;
console.log(`Build (at the first request for /console/): median ${median.toFixed(0)} ms of 5`);

// --pages: the pages on the bench:observability data set, in Chromium (test/bench/console-pages.ts).
if (process.argv.includes('--pages')) await import('./console-pages.ts');
