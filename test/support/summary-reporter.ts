// Closes the test output with the plain line CI reads: "N passed, N failed" (suites are not counted, tests are).
// A skipped or todo test counts as failed: this project has no skipped tests, so one is a test that did not run.
// Before it, the OpenAPI contract figures: how many responses the tests checked against the document, and how much of
// the document they covered. With TEST_FILE_TIMINGS=<path>, it also writes how long each test file took, as JSON
// (bench:newcomer reads it).
import { rmSync, writeFileSync } from 'node:fs';
import { relative } from 'node:path';
import type { TestEvent } from 'node:test/reporters';

export default async function* summaryReporter(source: AsyncIterable<TestEvent>): AsyncGenerator<string> {
  let passed = 0;
  let failed = 0;
  const notRun: string[] = [];
  const fileMs = new Map<string, number>();
  for await (const event of source) {
    // Each test file's own summary (the run's last one names no file).
    if (event.type === 'test:summary' && event.data.file) {
      fileMs.set(relative(process.cwd(), event.data.file), Math.round(event.data.duration_ms));
    }
    if (event.type !== 'test:pass' && event.type !== 'test:fail') continue;
    const data = event.data as { name: string; details?: { type?: string }; skip?: unknown; todo?: unknown };
    if (data.details?.type === 'suite') continue;
    if (event.type === 'test:fail') failed++;
    else if (data.skip || data.todo) {
      failed++;
      notRun.push(data.name);
    } else passed++;
  }
  const timings = process.env.TEST_FILE_TIMINGS;
  if (timings) writeFileSync(timings, `${JSON.stringify(Object.fromEntries(fileMs), null, 2)}\n`);
  // The responses the tests checked against the OpenAPI document (test/support/contract.ts, global-setup.ts).
  const coverage = process.env.CONTRACT_COVERAGE_DIR;
  if (coverage && process.env.CONTRACT_COVERAGE_READER === String(process.pid)) {
    const { contractFigures } = await import('./contract.ts');
    const figures = contractFigures(coverage);
    // The reporter removes the directory once read: the runner's global teardown may run before this point.
    rmSync(coverage, { recursive: true, force: true });
    if (figures) yield `\n${figures}`;
  }
  for (const name of notRun) yield `\nskipped (counted as failed): ${name}`;
  yield `\n${passed} passed, ${failed} failed\n`;
}
