import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { parseDuration } from '#shared/core/config/duration.ts';
import { RateError, rateExpression } from '../../infra/rate.ts';

const ms = (text: string) => parseDuration(text)!;

test('config durations become EventBridge rate expressions in the largest exact unit', () => {
  assert.equal(rateExpression(ms('30m')), 'rate(30 minutes)');
  assert.equal(rateExpression(ms('1h')), 'rate(1 hour)');
  assert.equal(rateExpression(ms('1m')), 'rate(1 minute)');
  assert.equal(rateExpression(ms('1h30m')), 'rate(90 minutes)');
  assert.equal(rateExpression(ms('2h')), 'rate(2 hours)');
  assert.equal(rateExpression(ms('24h')), 'rate(1 day)');
  assert.equal(rateExpression(ms('1d')), 'rate(1 day)');
  assert.equal(rateExpression(ms('36h')), 'rate(36 hours)');
  assert.equal(rateExpression(ms('7d')), 'rate(7 days)');
});

test('intervals EventBridge cannot run are refused, naming the setting', () => {
  for (const text of ['30s', '500ms', '90s', '1m30s']) {
    assert.throws(
      () => rateExpression(ms(text), 'health.probe_interval'),
      (err: unknown) => {
        assert.ok(err instanceof RateError);
        assert.match(err.message, /^health\.probe_interval: /);
        return true;
      },
    );
  }
  for (const bad of [0, -60_000, Number.NaN, Number.POSITIVE_INFINITY])
    assert.throws(() => rateExpression(bad));
});

test('the expression always means the interval it came from', () => {
  const unitMs = { minute: 60_000, hour: 3_600_000, day: 86_400_000 } as const;
  fc.assert(
    fc.property(fc.integer({ min: 1, max: 60 * 24 * 365 }), (minutes) => {
      const expression = rateExpression(minutes * 60_000);
      const match = /^rate\((\d+) (minute|hour|day)s?\)$/.exec(expression);
      assert.ok(match, expression);
      const value = Number(match[1]);
      assert.equal(value * unitMs[match[2] as keyof typeof unitMs], minutes * 60_000);
      assert.equal(expression.endsWith('s)'), value !== 1, `plural matches the value: ${expression}`);
    }),
  );
});
