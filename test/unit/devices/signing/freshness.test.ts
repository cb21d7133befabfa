import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { DeviceAuthError } from '#shared/devices/signing/certificate.ts';
import {
  checkClientTimestamp,
  InvalidTimestampError,
  parseRfc3339,
} from '#shared/devices/signing/freshness.ts';

const FIVE_MINUTES = 5 * 60 * 1000;

describe('parseRfc3339', () => {
  test('accepts RFC 3339 date-times with Z or a numeric offset, with or without a fraction', () => {
    const cases: [string, number][] = [
      ['2026-01-02T03:04:05Z', Date.UTC(2026, 0, 2, 3, 4, 5)],
      ['2026-01-02t03:04:05z', Date.UTC(2026, 0, 2, 3, 4, 5)],
      ['2026-01-02T03:04:05.1Z', Date.UTC(2026, 0, 2, 3, 4, 5, 100)],
      ['2026-01-02T03:04:05.123Z', Date.UTC(2026, 0, 2, 3, 4, 5, 123)],
      ['2026-01-02T03:04:05.123456789Z', Date.UTC(2026, 0, 2, 3, 4, 5, 123)],
      ['2026-01-02T04:04:05.123+01:00', Date.UTC(2026, 0, 2, 3, 4, 5, 123)],
      ['2026-01-01T21:34:05-05:30', Date.UTC(2026, 0, 2, 3, 4, 5)],
      ['2026-01-02T03:04:05+00:00', Date.UTC(2026, 0, 2, 3, 4, 5)],
      ['2026-01-02T03:04:05-00:00', Date.UTC(2026, 0, 2, 3, 4, 5)],
      ['2024-02-29T00:00:00Z', Date.UTC(2024, 1, 29)],
      ['2000-02-29T23:59:59Z', Date.UTC(2000, 1, 29, 23, 59, 59)],
      ['2016-12-31T23:59:60Z', Date.UTC(2017, 0, 1)], // leap second
    ];
    for (const [text, ms] of cases) assert.equal(parseRfc3339(text).getTime(), ms, text);
    // Years below 100 are years, not 19xx (Date.UTC would say 1950).
    assert.equal(parseRfc3339('0050-06-01T00:00:00Z').toISOString(), '0050-06-01T00:00:00.000Z');
  });

  test('refuses anything else with InvalidTimestampError', () => {
    for (const bad of [
      '',
      'now',
      '2026-01-02',
      '2026-01-02T03:04:05', // no zone
      '2026-01-02 03:04:05Z', // space separator
      '2026-01-02T03:04Z', // no seconds
      '2026-01-02T03:04:05+0100', // offset without colon
      '2026-01-02T03:04:05+01',
      '2026-01-02T03:04:05.Z', // empty fraction
      '2026-01-02T03:04:05,5Z', // comma fraction
      '2026-1-02T03:04:05Z',
      '26-01-02T03:04:05Z',
      '+002026-01-02T03:04:05Z',
      '2026-W01-5T03:04:05Z',
      '2026-13-01T00:00:00Z', // month
      '2026-00-01T00:00:00Z',
      '2026-01-00T00:00:00Z', // day
      '2026-01-32T00:00:00Z',
      '2026-04-31T00:00:00Z',
      '2025-02-29T00:00:00Z', // not a leap year
      '1900-02-29T00:00:00Z',
      '2026-01-02T24:00:00Z', // hour
      '2026-01-02T03:60:00Z', // minute
      '2026-01-02T03:04:61Z', // second
      '2026-01-02T03:04:05+24:00', // offset
      '2026-01-02T03:04:05+01:60',
      ' 2026-01-02T03:04:05Z',
      '2026-01-02T03:04:05Z ',
      '2026-01-02T03:04:05Z\n',
    ]) {
      assert.throws(() => parseRfc3339(bad), InvalidTimestampError, JSON.stringify(bad));
    }
    for (const notString of [undefined, null, 1767323045000, {}]) {
      assert.throws(() => Reflect.apply(parseRfc3339, undefined, [notString]), InvalidTimestampError);
    }
  });

  test('the message reads after the field name and shows an example', () => {
    assert.throws(
      () => parseRfc3339('yesterday'),
      (err: unknown) =>
        err instanceof InvalidTimestampError &&
        /^must be an RFC 3339 date-time/.test(err.message) &&
        err.message.includes('2026-01-02T03:04:05Z') &&
        err.message.includes('"yesterday"'),
    );
  });
});

describe('checkClientTimestamp', () => {
  const now = new Date('2026-06-01T12:00:00.000Z');

  function stale(text: string, direction: RegExp): void {
    assert.throws(
      () => checkClientTimestamp(text, now, FIVE_MINUTES),
      (err: unknown) => {
        assert.ok(err instanceof DeviceAuthError);
        assert.equal(err.code, 'stale_timestamp');
        assert.equal(err.kind, 'unauthenticated');
        assert.match(err.message, direction);
        assert.match(err.message, /300 s/);
        return true;
      },
    );
  }

  test('inside the window, in both directions, bounds included', () => {
    for (const text of [
      '2026-06-01T12:00:00Z',
      '2026-06-01T11:55:00Z',
      '2026-06-01T12:05:00Z',
      '2026-06-01T13:04:59.999+01:00',
      '2026-06-01T07:01:00-04:59',
    ]) {
      const at = checkClientTimestamp(text, now, FIVE_MINUTES);
      assert.ok(Math.abs(at.getTime() - now.getTime()) <= FIVE_MINUTES, text);
    }
    assert.equal(
      checkClientTimestamp('2026-06-01T12:04:59.5Z', now, FIVE_MINUTES).toISOString(),
      '2026-06-01T12:04:59.500Z',
    );
  });

  test('too old: stale_timestamp', () => {
    stale('2026-06-01T11:54:59.999Z', /behind/);
    stale('2026-06-01T10:00:00Z', /7200 s behind/);
    stale('2020-01-01T00:00:00Z', /behind/);
  });

  test('in the future: stale_timestamp too', () => {
    stale('2026-06-01T12:05:00.001Z', /ahead of/);
    stale('2026-06-01T14:00:00+01:00', /ahead of/);
  });

  test('the window follows maxSkewMs', () => {
    checkClientTimestamp('2026-06-01T12:00:30Z', now, 30_000);
    assert.throws(() => checkClientTimestamp('2026-06-01T12:00:31Z', now, 30_000), DeviceAuthError);
  });

  test('an unparseable timestamp is InvalidTimestampError, not stale_timestamp', () => {
    assert.throws(
      () => checkClientTimestamp('2026-06-01 12:00:00', now, FIVE_MINUTES),
      InvalidTimestampError,
    );
  });
});
