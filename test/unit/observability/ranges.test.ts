import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  COVER_GRAINS,
  segments,
  slotBounds,
  TOTALS_GRAINS,
  totalsSegments,
} from '#shared/observability/ranges.ts';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

// The summary function reads a range's rollup rows through fixed slots (two per grain): every cover must fit them,
// each segment in a slot of its grain and every other slot empty.
test('every cover of a range fits the fixed slots of its grains', () => {
  const start = Date.UTC(2026, 0, 1);
  let seed = 7;
  const next = (n: number) => {
    seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
    return seed % n;
  };
  for (let i = 0; i < 2000; i++) {
    for (const finest of ['hour', 'day'] as const) {
      const step = finest === 'hour' ? HOUR : DAY;
      const f = start + next(60 * 24) * HOUR - (finest === 'day' ? (start + next(60 * 24) * HOUR) % DAY : 0);
      const from = Math.floor(f / step) * step;
      const to = from + (1 + next(finest === 'hour' ? 24 * 62 : 62)) * step;
      for (const [segs, grains] of [
        [segments(from, to, finest), COVER_GRAINS[finest]],
        [totalsSegments(from, to, finest), TOTALS_GRAINS[finest]],
      ] as const) {
        const bounds = slotBounds(segs, grains);
        assert.equal(bounds.length, grains.length * 4);
        const used = grains.flatMap((grain, g) =>
          [0, 1]
            .map((k) => ({
              grain,
              from: bounds[4 * g + 2 * k] as number,
              to: bounds[4 * g + 2 * k + 1] as number,
            }))
            .filter((s) => s.from < s.to),
        );
        const key = (s: { grain: string; from: number; to: number }) => `${s.grain} ${s.from} ${s.to}`;
        assert.deepEqual(used.map(key).sort(), segs.map(key).sort());
      }
    }
  }
});
