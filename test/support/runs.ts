// How many cases a property, fuzz or crash suite runs, in one place. npm test runs each suite's full count;
// npm run test:fast (scripts/test.ts) sets TEST_RUNS_SCALE to a fraction, so the loop while you work draws fewer
// cases from the same generators and seeds (never fewer than `least`). A suite's own variable (FUZZ_RUNS, ...),
// when set, wins over both.
export function runs(full: number, options: { variable?: string; least?: number } = {}): number {
  const own = options.variable ? process.env[options.variable] : undefined;
  if (own) return Number(own);
  const scale = Number(process.env.TEST_RUNS_SCALE || 1);
  if (!(scale > 0 && scale <= 1))
    throw new Error(`TEST_RUNS_SCALE: ${process.env.TEST_RUNS_SCALE} is not in (0, 1]`);
  return Math.max(options.least ?? 1, Math.round(full * scale));
}
