// Pure parts of the admin observability area: keyset cursors (opaque, checksummed, bound to list and filters) and
// the duration histogram (bucketing and percentiles).
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, test } from 'node:test';
import { SKETCH_ALPHA } from '#shared/core/db/histogram.ts';
import { ServiceError } from '#shared/core/errors.ts';
import {
  cursorKey,
  decodeCursor,
  encodeCursor,
  filterHash,
  ID_RE,
  likePattern,
  TS_RE,
} from '#shared/observability/cursor.ts';
import { sketchKey, sketchPercentiles, sketchValue } from '#shared/observability/duration-sketch.ts';
import { listEventsQuery, summaryQuery } from '#shared/observability/schemas.ts';
import { randomSecret } from '#test/support/secrets.ts';

const shape = [TS_RE, ID_RE, ID_RE];
const refused = (fn: () => unknown) =>
  assert.throws(
    fn,
    (e: unknown) => e instanceof ServiceError && e.kind === 'invalid' && /cursor/.test(e.message),
  );

describe('observability cursors', () => {
  const key = cursorKey({ auth: { jwt_secret: randomSecret() } as never });
  const f = filterHash({ result: 'denied', limit: 20 });
  const c = encodeCursor(key, 'events', ['2026-11-22T08:00:00.123456Z', '42', '99'], f);

  test('round trip; base64url only; limit does not change the filter hash', () => {
    assert.match(c, /^[A-Za-z0-9_-]+$/);
    assert.deepEqual(decodeCursor(key, c, 'events', f, shape), ['2026-11-22T08:00:00.123456Z', '42', '99']);
    assert.equal(filterHash({ result: 'denied', limit: 50, cursor: 'x' }), f);
    assert.notEqual(filterHash({ result: 'allowed' }), f);
  });

  test('tampered, garbage, other list, other filters, wrong shape: 400 naming cursor', () => {
    for (let i = 0; i < c.length; i += 7) {
      const flipped = `${c.slice(0, i)}${c[i] === 'A' ? 'B' : 'A'}${c.slice(i + 1)}`;
      if (flipped !== c) refused(() => decodeCursor(key, flipped, 'events', f, shape));
    }
    refused(() => decodeCursor(key, 'not-json', 'events', f, shape));
    refused(() => decodeCursor(key, c, 'session', f, shape));
    refused(() => decodeCursor(key, c, 'events', filterHash({}), shape));
    const forged = Buffer.from(
      JSON.stringify({ k: 'events', v: ["x' OR 1=1 --", '1', '1'], f, c: 'whatever' }),
    ).toString('base64url');
    refused(() => decodeCursor(key, forged, 'events', f, shape));
  });

  test('a cursor made up or issued by another deployment is refused: the HMAC key comes from that secret', () => {
    const other = cursorKey({ auth: { jwt_secret: randomSecret() } as never });
    assert.notDeepEqual(other, key);
    refused(() => decodeCursor(other, c, 'events', f, shape));
    // A well-formed position with a hash of the public parts (what a client could compute) is not enough.
    const body = { k: 'events', v: ['2026-11-22T08:00:00.123456Z', '1', '99'], f };
    const guessed = createHash('sha256').update(JSON.stringify(body)).digest('base64url').slice(0, 22);
    const made = Buffer.from(JSON.stringify({ ...body, c: guessed })).toString('base64url');
    refused(() => decodeCursor(key, made, 'events', f, shape));
  });

  test('LIKE wildcards in free text match literally', () => {
    assert.equal(likePattern('50%_off\\'), '%50\\%\\_off\\\\%');
  });

  test('query validation names the field', () => {
    const bad = listEventsQuery.safeParse({ result: 'blocked', limit: '0' });
    assert.equal(bad.success, false);
    const paths = bad.error?.issues.map((i) => i.path.join('.'));
    assert.deepEqual(paths?.sort(), ['limit', 'result']);
    const inverted = summaryQuery.safeParse({ from: '2026-11-22T00:00:00Z', to: '2026-11-21T00:00:00Z' });
    assert.equal(inverted.error?.issues[0]?.path[0], 'from');
    const long = summaryQuery.safeParse({ from: '2026-01-01T00:00:00Z', to: '2026-11-21T00:00:00Z' });
    assert.equal(long.success, false);
  });
});

describe('duration sketch', () => {
  test('keys: 0 ms alone in 0; every duration reported within SKETCH_ALPHA, up to a day and beyond', () => {
    assert.equal(sketchKey(0), 0);
    assert.equal(sketchValue(0), 0);
    assert.equal(sketchKey(1), 1);
    for (let ms = 1; ms <= 27; ms++)
      assert.equal(sketchValue(sketchKey(ms)), ms, 'one integer a bucket: exact');
    for (let ms = 1; ms < 2_147_483_647; ms = Math.ceil(ms * 1.013)) {
      const reported = sketchValue(sketchKey(ms));
      assert.ok(Math.abs(reported - ms) / ms <= SKETCH_ALPHA + 1e-12, `${ms} ms reported as ${reported}`);
      assert.ok(sketchKey(ms + 1) >= sketchKey(ms), 'keys ascend with durations');
    }
  });

  test('percentiles: percentile_cont over the reported values, capped by the maximum; null when empty', () => {
    assert.deepEqual(sketchPercentiles(null, [0.5], 0), [null]);
    const durations = Array.from({ length: 1001 }, (_, i) => Math.round(1 + (i * i) / 50));
    const counts = new Map<number, number>();
    for (const d of durations) counts.set(sketchKey(d), (counts.get(sketchKey(d)) ?? 0) + 1);
    const keys = [...counts.keys()].sort((a, b) => a - b);
    const sketch = [keys, keys.map((k) => counts.get(k) as number)] as const;
    const max = Math.max(...durations);
    const sorted = [...durations].sort((a, b) => a - b);
    const ps = [0, 0.5, 0.95, 0.99, 0.999, 1];
    for (const p of ps) {
      const h = p * (sorted.length - 1);
      const lo = sorted[Math.floor(h)] as number;
      const exact = lo + (h - Math.floor(h)) * ((sorted[Math.ceil(h)] as number) - lo);
      const [got] = sketchPercentiles(sketch, [p], max) as [number];
      assert.ok(Math.abs(got - exact) / exact <= SKETCH_ALPHA, `p${p}: ${got} vs ${exact}`);
    }
    // A merged sketch in any key order (as reads build them) reads as the sorted one.
    const shuffled = keys.map((_, i) => (i * 7919) % keys.length);
    assert.equal(new Set(shuffled).size, keys.length);
    const unsorted = [
      shuffled.map((i) => keys[i] as number),
      shuffled.map((i) => sketch[1][i] as number),
    ] as const;
    assert.notDeepEqual(unsorted[0], keys);
    assert.deepEqual(sketchPercentiles(unsorted, ps, max), sketchPercentiles(sketch, ps, max));
    assert.deepEqual(sketchPercentiles(sketch, [1], 5), [5]);
    assert.deepEqual(sketchPercentiles([[0], [3]], [0.5, 0.99], 0), [0, 0]);
  });
});
