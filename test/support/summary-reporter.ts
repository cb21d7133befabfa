// Closes the test output with the plain line CI reads: "N passed, N failed" (suites are not counted, tests are).
import type { TestEvent } from 'node:test/reporters';

export default async function* summaryReporter(source: AsyncIterable<TestEvent>): AsyncGenerator<string> {
  let passed = 0;
  let failed = 0;
  let skipped = 0;
  for await (const event of source) {
    if (event.type !== 'test:pass' && event.type !== 'test:fail') continue;
    const data = event.data as { details?: { type?: string }; skip?: unknown; todo?: unknown };
    if (data.details?.type === 'suite') continue;
    if (event.type === 'test:fail') failed++;
    else if (data.skip || data.todo) skipped++;
    else passed++;
  }
  yield `\n${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}\n`;
}
