// The spool as the hooks and the daemon use it: at-least-once reads, the size bound and its drop count, torn records
// detected, skipped and counted once, many processes appending at once, and processes killed (SIGKILL) in the
// middle of their writes.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { appendFileSync, mkdtempSync, readdirSync, utimesSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { encodeRecord } from '#agent/spool/framing.ts';
import { Spool, type SpoolRecord } from '#agent/spool/spool.ts';
import { runs } from '#test/support/runs.ts';
import { APPENDER, padding } from '#test/support/spool-appender.ts';

const freshDir = () => mkdtempSync(join(tmpdir(), 'spool-'));

type Item = { n: number; pad?: string };

/** Everything in the spool, read in batches and acknowledged batch by batch. */
function drain<T>(spool: Spool, batch = 100): T[] {
  const out: T[] = [];
  for (let records = spool.readBatch<T>(batch); records.length > 0; records = spool.readBatch<T>(batch)) {
    out.push(...records.map((r) => r.value));
    spool.ack((records.at(-1) as SpoolRecord<T>).position);
  }
  return out;
}

const newestSegment = (dir: string) =>
  join(
    dir,
    readdirSync(dir)
      .filter((name) => name.endsWith('.seg'))
      .sort()
      .at(-1) as string,
  );

test('read is at-least-once: the same records until acknowledged, then the ones after', () => {
  const spool = new Spool(freshDir(), { graceMs: 0 });
  for (let n = 0; n < 10; n++) spool.append({ n });
  const first = spool.readBatch<Item>(4);
  assert.deepEqual(
    first.map((r) => r.value.n),
    [0, 1, 2, 3],
  );
  assert.deepEqual(
    spool.readBatch<Item>(4).map((r) => r.value.n),
    [0, 1, 2, 3],
  );
  spool.ack((first[1] as SpoolRecord<Item>).position);
  assert.deepEqual(
    spool.readBatch<Item>(3).map((r) => r.value.n),
    [2, 3, 4],
  );
  spool.ack((first[0] as SpoolRecord<Item>).position); // behind the cursor: ignored
  assert.deepEqual(
    spool.readBatch<Item>(1).map((r) => r.value.n),
    [2],
  );
  assert.deepEqual(spool.stats(), { dropped: 0, torn: 0, pending: 8, bytes: spool.stats().bytes });
  assert.deepEqual(
    drain<Item>(spool).map((v) => v.n),
    [2, 3, 4, 5, 6, 7, 8, 9],
  );
  assert.equal(spool.stats().pending, 0);
});

test('bounded by size: the oldest are dropped first, counted, and the count survives a restart', () => {
  const dir = freshDir();
  const spool = new Spool(dir, { maxBytes: 64 * 1024, segmentBytes: 8 * 1024, graceMs: 0 });
  for (let n = 0; n < 300; n++) spool.append({ n, pad: 'x'.repeat(100) });
  const delivered = drain<Item>(spool, 50).map((v) => v.n);
  assert.deepEqual(
    delivered,
    Array.from({ length: 300 }, (_, n) => n),
    'under the bound, nothing is dropped',
  );
  for (let n = 300; n < 3000; n++) spool.append({ n, pad: 'x'.repeat(100) });
  const stats = spool.stats();
  assert.ok(stats.bytes <= 64 * 1024 + 8 * 1024, `${stats.bytes} bytes`);
  assert.ok(stats.dropped > 0);
  const restarted = new Spool(dir, { maxBytes: 64 * 1024, segmentBytes: 8 * 1024, graceMs: 0 });
  const rest = drain<Item>(restarted).map((v) => v.n);
  // What is left is the newest events, contiguous up to the last; with what was dropped, every event is accounted.
  assert.deepEqual(
    rest,
    Array.from({ length: rest.length }, (_, i) => 3000 - rest.length + i),
  );
  assert.equal(restarted.stats().dropped, stats.dropped);
  assert.equal(300 + stats.dropped + rest.length, 3000);
});

test('a torn record between two records is skipped and counted once, however often it is read', () => {
  const dir = freshDir();
  const spool = new Spool(dir, { graceMs: 60_000 });
  spool.append({ n: 1 });
  const whole = encodeRecord(Buffer.from(JSON.stringify({ n: 99, pad: 'y'.repeat(500) })));
  appendFileSync(newestSegment(dir), whole.subarray(0, 200)); // a write cut short by a crash
  spool.append({ n: 2 });
  assert.deepEqual(
    spool.readBatch<Item>(10).map((r) => r.value.n),
    [1, 2],
  );
  assert.deepEqual(
    spool.readBatch<Item>(10).map((r) => r.value.n),
    [1, 2],
  );
  assert.equal(spool.stats().torn, 1);
  assert.deepEqual(
    drain<Item>(spool).map((v) => v.n),
    [1, 2],
  );
  assert.equal(spool.stats().torn, 1);
});

test('an incomplete record at the end is a write in progress until the grace time, then a torn one', () => {
  const dir = freshDir();
  const waiting = new Spool(dir, { graceMs: 60_000 });
  waiting.append({ n: 1 });
  const whole = encodeRecord(Buffer.from(JSON.stringify({ n: 2 })));
  appendFileSync(newestSegment(dir), whole.subarray(0, 15));
  assert.deepEqual(
    drain<Item>(waiting).map((v) => v.n),
    [1],
  );
  assert.equal(waiting.stats().torn, 0, 'not counted while it may still be written');
  // The grace time passes: the segment was last written longer ago than it. (A grace of 0 instead raced the clock:
  // the file's time has sub-millisecond precision, Date.now() whole milliseconds, so in the same millisecond the
  // write looked to be still in progress.)
  const past = new Date(Date.now() - 2 * 60_000);
  utimesSync(newestSegment(dir), past, past);
  const later = new Spool(dir, { graceMs: 60_000 });
  assert.deepEqual(later.readBatch(10), []);
  assert.equal(later.stats().torn, 1);
  later.append({ n: 3 });
  assert.deepEqual(
    drain<Item>(later).map((v) => v.n),
    [3],
  );
  assert.equal(later.stats().torn, 1);
});

function runAppender(
  dir: string,
  run: string,
  count: number,
  minBytes: number,
  maxBytes: number,
  segment: number,
) {
  const child = spawn(
    process.execPath,
    [APPENDER, dir, run, String(count), String(minBytes), String(maxBytes), String(segment)],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  let out = '';
  child.stdout.on('data', (chunk) => {
    out += chunk;
  });
  const done = new Promise<{ code: number | null; signal: NodeJS.Signals | null; acked: number[] }>(
    (resolve) =>
      child.on('close', (code, signal) =>
        resolve({
          code,
          signal,
          acked: out
            .split('\n')
            .filter((line) => /^\d+$/.test(line))
            .map(Number),
        }),
      ),
  );
  return { child, done };
}

type Logged = { run: string; seq: number; pad: string };

test('many processes appending at once: every record once, in each writer order, none torn', async () => {
  const dir = freshDir();
  const writers = ['a', 'b', 'c', 'd'].map((run) => runAppender(dir, run, 400, 50, 400, 16 * 1024));
  const results = await Promise.all(writers.map((w) => w.done));
  for (const result of results) assert.equal(result.code, 0);
  const spool = new Spool(dir, { graceMs: 0 });
  const all = drain<Logged>(spool, 250);
  assert.equal(all.length, 1600);
  for (const run of ['a', 'b', 'c', 'd'])
    assert.deepEqual(
      all.filter((r) => r.run === run).map((r) => r.seq),
      Array.from({ length: 400 }, (_, i) => i),
    );
  for (const r of all) assert.equal(r.pad, padding(r.seq, 50, 400));
  assert.ok(
    readdirSync(dir).filter((name) => name.endsWith('.seg')).length <= 2,
    'read segments are deleted',
  );
  assert.deepEqual(spool.stats(), { dropped: 0, torn: 0, pending: 0, bytes: spool.stats().bytes });
});

test('writers killed (SIGKILL) at random points: after restart nothing lost or duplicated but the torn', async (t) => {
  const dir = freshDir();
  const kills = runs(30, { variable: 'SPOOL_CRASH_RUNS' });
  const logged = new Map<string, number[]>();
  for (let i = 0; i < kills; i++) {
    const run = `r${i}`;
    // Large records (up to 600 KB, many pages per write) so that a kill can land inside a write.
    const writer = runAppender(dir, run, 100_000, 1_000, 600_000, 2 * 1024 * 1024);
    // Killed at a random time (0-30 ms) after a random number of acknowledged appends (5-30). Not after a random
    // time from its start alone: what a writer stores in a given time follows the machine's disk, and past the
    // appenders' bound (1 GB) the oldest segments are dropped, which is the bound's job, not a loss.
    const killAfter = 5 + Math.floor(Math.random() * 26);
    let acks = 0;
    let killing = false;
    writer.child.stdout.on('data', (chunk: Buffer) => {
      acks += chunk.toString('utf8').split('\n').length - 1;
      if (acks < killAfter || killing) return;
      killing = true;
      setTimeout(() => writer.child.kill('SIGKILL'), Math.floor(Math.random() * 31));
    });
    const result = await writer.done;
    assert.equal(result.signal, 'SIGKILL');
    logged.set(run, result.acked);
  }
  const spool = new Spool(dir, { graceMs: 0 });
  const all = drain<Logged>(spool, 50);
  const seen = new Set<string>();
  for (const record of all) {
    const key = `${record.run}/${record.seq}`;
    assert.ok(!seen.has(key), `${key} read twice`);
    seen.add(key);
    assert.equal(record.pad, padding(record.seq, 1_000, 600_000), `${key} damaged`);
  }
  let extra = 0;
  for (const [run, acked] of logged) {
    const read = all.filter((r) => r.run === run).map((r) => r.seq);
    // Every append that returned is there, in order; at most one more (its write done, its report not).
    assert.deepEqual(read.slice(0, acked.length), acked, `${run}: an acknowledged append is missing`);
    assert.ok(read.length - acked.length <= 1, `${run}: ${read.length - acked.length} unexplained records`);
    if (read.length > acked.length) assert.equal(read.at(-1), acked.length);
    extra += read.length - acked.length;
  }
  const stats = spool.stats();
  assert.equal(stats.dropped, 0, 'nothing dropped by the size bound');
  assert.ok(stats.torn <= kills, `${stats.torn} torn records for ${kills} kills`);
  assert.equal(stats.pending, 0);
  t.diagnostic(`${kills} kills: ${all.length} records, ${extra} written but unreported, ${stats.torn} torn`);
});
