// Closes the test output with the plain line CI reads: "N passed, N failed" (suites are not counted, tests are).
// A skipped or todo test counts as failed: this project has no skipped tests, so one is a test that did not run.
import type { TestEvent } from 'node:test/reporters';

export default async function* summaryReporter(source: AsyncIterable<TestEvent>): AsyncGenerator<string> {
  let passed = 0;
  let failed = 0;
  const notRun: string[] = [];
  for await (const event of source) {
    if (event.type !== 'test:pass' && event.type !== 'test:fail') continue;
    const data = event.data as { name: string; details?: { type?: string }; skip?: unknown; todo?: unknown };
    if (data.details?.type === 'suite') continue;
    if (event.type === 'test:fail') failed++;
    else if (data.skip || data.todo) {
      failed++;
      notRun.push(data.name);
    } else passed++;
  }
  for (const name of notRun) yield `\nskipped (counted as failed): ${name}`;
  yield `\n${passed} passed, ${failed} failed\n`;
}
