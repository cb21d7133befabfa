// When the daemon tries again: full jitter under an exponential bound, and never before the service's Retry-After.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { fullJitter, nextWait } from '#agent/daemon/backoff.ts';
import { retryAfterMs } from '#shared/core/backoff.ts';

const settings = { baseMs: 1000, capMs: 300_000 };

test('full jitter: uniform below min(cap, base * 2^attempt), from zero', () => {
  assert.equal(
    fullJitter(0, settings, () => 0),
    0,
  );
  assert.equal(
    fullJitter(0, settings, () => 0.999),
    999,
  );
  assert.equal(
    fullJitter(3, settings, () => 0.5),
    4000,
  );
  assert.equal(
    fullJitter(40, settings, () => 0.999),
    299_700,
    'capped, however many failures',
  );
  fc.assert(
    fc.property(fc.nat(100), fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }), (attempt, r) => {
      const wait = fullJitter(attempt, settings, () => r);
      assert.ok(wait >= 0 && wait < Math.min(settings.capMs, settings.baseMs * 2 ** attempt));
    }),
  );
});

test('Retry-After: delay-seconds or an HTTP date; anything else is ignored', () => {
  const now = Date.parse('2026-01-02T03:04:05Z');
  assert.equal(retryAfterMs('120', now), 120_000);
  assert.equal(retryAfterMs(' 0 ', now), 0);
  assert.equal(retryAfterMs('Fri, 02 Jan 2026 03:04:35 GMT', now), 30_000);
  assert.equal(retryAfterMs('Fri, 02 Jan 2026 03:00:00 GMT', now), 0, 'a date past is now');
  for (const bad of [null, undefined, '', '-5', '1.5', 'soon', 'Friday'])
    assert.equal(retryAfterMs(bad, now), undefined);
});

test('after a Retry-After the wait is at least it (and at most a tenth more); bounded by maxRetryAfterMs', () => {
  fc.assert(
    fc.property(
      fc.nat(20),
      fc.integer({ min: 0, max: 7_200_000 }),
      fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
      (attempt, after, r) => {
        const wait = nextWait(attempt, { ...settings, maxRetryAfterMs: 3_600_000 }, after, () => r);
        const bounded = Math.min(after, 3_600_000);
        assert.ok(wait >= bounded && wait <= bounded * 1.1, `${wait} for Retry-After ${after}`);
      },
    ),
  );
  assert.equal(
    nextWait(2, settings, undefined, () => 0.5),
    2000,
    'without one, full jitter',
  );
});
