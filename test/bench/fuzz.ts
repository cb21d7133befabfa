// npm run bench:fuzz — the fuzz of test/integration/core/fuzz.test.ts at volume: requests derived from the OpenAPI
// document (test/support/fuzz-requests.ts, the same generators), the operations taken in turn, each case judged as in
// the test (no 5xx, every 4xx exactly {error, message}, the contract, a refused request stores nothing). Prints cases
// per second, the count per operation and per answer status, and every failure (the first 3 per operation and
// problem, with the request that produced it); exits 1 if there was any. No shrinking here: the same
// BENCH_FUZZ_SEED draws the same cases again, and a failure's request can be written as a caseFor() regression in the
// test.
//
// BENCH_DRIVER=pglite (default) | postgres | data-api (the last two on TEST_DATABASE_URL, else on a PostgreSQL from
// npm started for the run); BENCH_FUZZ_RUNS=20000 cases in all; BENCH_FUZZ_SEED (default: a random seed, printed).
import fc from 'fast-check';
import { type DriverKind, useBenchDatabase } from '#test/support/databases.ts';
import {
  caseArbitrary,
  describeOutcome,
  FUZZ_SERVICE_OVERRIDES,
  type FuzzCase,
  operations,
  prepareWorld,
  runCase,
} from '#test/support/fuzz-requests.ts';
import { startTestService } from '#test/support/service.ts';

const driver = (process.env.BENCH_DRIVER ?? 'pglite') as DriverKind;
const runs = Number(process.env.BENCH_FUZZ_RUNS ?? 20_000);
const seed = Number(process.env.BENCH_FUZZ_SEED ?? Math.floor(Math.random() * 2 ** 31));
/** Cases drawn per operation at a time (each draw its own seed, so that the run is replayable from `seed`). */
const CHUNK = 50;

if (driver !== 'pglite') await useBenchDatabase();
const svc = await startTestService(driver, FUZZ_SERVICE_OVERRIDES);
const world = await prepareWorld(svc);

const arbitraries = operations.map((op) => caseArbitrary(op, world));
const pending = operations.map((): FuzzCase[] => []);
const draws = operations.map(() => 0);
const next = (i: number): FuzzCase => {
  if (!pending[i]!.length) {
    pending[i] = fc.sample(arbitraries[i]!, { seed: seed + i * 100_003 + draws[i]! * 7_919, numRuns: CHUNK });
    draws[i]! += 1;
  }
  return pending[i]!.shift() as FuzzCase;
};

interface PerOperation {
  cases: number;
  ms: number;
  statuses: Map<number, number>;
  failures: number;
}
const perOperation = new Map(
  operations.map((op) => [
    op.operationId,
    { cases: 0, ms: 0, statuses: new Map(), failures: 0 } as PerOperation,
  ]),
);
const statuses = new Map<number, number>();
const failures = new Map<string, { count: number; examples: string[] }>();
const bump = <K>(map: Map<K, number>, key: K) => map.set(key, (map.get(key) ?? 0) + 1);

console.log(
  `Fuzz on ${driver}: ${runs} cases over ${operations.length} operations, seed ${seed} (BENCH_FUZZ_SEED=${seed} replays)`,
);
const started = performance.now();
let lastReport = started;
for (let n = 0; n < runs; n++) {
  const i = n % operations.length;
  const op = operations[i]!;
  const c = next(i);
  const t0 = performance.now();
  const outcome = await runCase(world, c);
  const stats = perOperation.get(op.operationId)!;
  stats.cases++;
  stats.ms += performance.now() - t0;
  bump(stats.statuses, outcome.status);
  bump(statuses, outcome.status);
  if (outcome.problems.length) {
    stats.failures++;
    // One bucket per operation and kind of problem (the text before any number or quote).
    const key = `${op.operationId}: ${outcome.problems.map((p) => p.split(/[0-9"]/)[0]).join('; ')}`;
    const bucket = failures.get(key) ?? { count: 0, examples: [] };
    bucket.count++;
    if (bucket.examples.length < 3) bucket.examples.push(describeOutcome(c, outcome));
    failures.set(key, bucket);
  }
  if (performance.now() - lastReport > 15_000) {
    lastReport = performance.now();
    const rate = (n + 1) / ((lastReport - started) / 1000);
    console.log(
      `  ${n + 1} cases, ${rate.toFixed(0)} cases/s, ${[...failures.values()].reduce((a, b) => a + b.count, 0)} failures`,
    );
  }
}
const seconds = (performance.now() - started) / 1000;
await svc.dispose();

const statusText = (map: Map<number, number>) =>
  [...map]
    .sort(([a], [b]) => a - b)
    .map(([s, k]) => `${s}×${k}`)
    .join(' ');
console.log(
  `\n${runs} cases in ${seconds.toFixed(1)} s: ${(runs / seconds).toFixed(0)} cases/s on ${driver}`,
);
console.log(`Answers: ${statusText(statuses)}\n`);
console.log('| operation | cases | ms/case | answers | failures |\n|---|---:|---:|---|---:|');
for (const [id, s] of perOperation) {
  console.log(
    `| ${id} | ${s.cases} | ${(s.ms / Math.max(1, s.cases)).toFixed(1)} | ${statusText(s.statuses)} | ${s.failures} |`,
  );
}
const total = [...failures.values()].reduce((a, b) => a + b.count, 0);
console.log(`\nFailures: ${total}${total ? ` (${failures.size} kinds)` : ''}`);
for (const [key, { count, examples }] of failures) {
  console.log(`\n${count}× ${key}`);
  for (const example of examples) console.log(example.replace(/^/gm, '  '));
}
process.exitCode = total ? 1 : 0;
