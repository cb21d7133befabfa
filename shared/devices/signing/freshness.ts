import { DeviceAuthError } from './certificate.ts';

/**
 * Freshness of signed device requests (device-protocol.md): `clientTimestamp` is an RFC 3339 date-time that must
 * lie within `device.max_clock_skew` of the server clock, in either direction.
 */

/** `clientTimestamp` is not an RFC 3339 date-time: a validation problem (400), not an authentication one. */
export class InvalidTimestampError extends Error {
  override name = 'InvalidTimestampError';
}

/**
 * RFC 3339 section 5.6 `date-time`: full-date "T" full-time, where the time has seconds, an optional fraction and a
 * mandatory offset (`Z` or ±hh:mm). `T` and `Z` may be lowercase (the note in 5.6); nothing else is accepted (no
 * space separator, no missing seconds or zone, no ±hhmm).
 */
const DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/;

const daysInMonth = (year: number, month: number): number =>
  month === 2
    ? (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0
      ? 29
      : 28
    : [4, 6, 9, 11].includes(month)
      ? 30
      : 31;

const EXAMPLE = 'e.g. 2026-01-02T03:04:05Z or 2026-01-02T04:04:05.123+01:00';

/**
 * Parses an RFC 3339 date-time strictly (fields in range, day valid for its month; a leap second `:60` is taken
 * as the first instant of the next minute; fractions beyond milliseconds are truncated). Throws
 * InvalidTimestampError, whose message reads after the field name ("clientTimestamp: must be ...").
 */
export function parseRfc3339(text: string): Date {
  const shown =
    typeof text === 'string' ? JSON.stringify(text.length > 40 ? `${text.slice(0, 40)}…` : text) : '';
  const m = typeof text === 'string' ? DATE_TIME.exec(text) : null;
  if (!m) {
    throw new InvalidTimestampError(
      typeof text === 'string'
        ? `must be an RFC 3339 date-time with seconds and a zone (${EXAMPLE}); got ${shown}`
        : `must be an RFC 3339 date-time string (${EXAMPLE})`,
    );
  }
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const offsetHours = m[10] === undefined ? 0 : Number(m[10]);
  const offsetMinutes = m[11] === undefined ? 0 : Number(m[11]);
  if (
    month < 1 ||
    month > 12 ||
    day < 1 ||
    day > daysInMonth(year, month) ||
    hour > 23 ||
    minute > 59 ||
    second > 60 ||
    offsetHours > 23 ||
    offsetMinutes > 59
  ) {
    throw new InvalidTimestampError(`has a field out of range (${EXAMPLE}); got ${shown}`);
  }
  const millis = Number((m[7] ?? '').slice(0, 3).padEnd(3, '0'));
  // setUTCFullYear, not Date.UTC: Date.UTC maps years 0..99 to 1900..1999.
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second, millis);
  const offsetMs = (offsetHours * 60 + offsetMinutes) * 60_000;
  return new Date(date.getTime() - (m[9] === '-' ? -offsetMs : offsetMs));
}

/**
 * Checks that `clientTimestamp` lies within `maxSkewMs` of `now`, in the past or the future (the bound itself is
 * inside). Unparseable: InvalidTimestampError. Outside the window: 401 `stale_timestamp`. Returns the instant.
 */
export function checkClientTimestamp(clientTimestamp: string, now: Date, maxSkewMs: number): Date {
  return checkFreshness(parseRfc3339(clientTimestamp), now, maxSkewMs);
}

/** The window check of checkClientTimestamp on an instant already parsed: `at` itself, or 401 `stale_timestamp`. */
export function checkFreshness(at: Date, now: Date, maxSkewMs: number): Date {
  const skew = at.getTime() - now.getTime();
  if (Math.abs(skew) > maxSkewMs) {
    const seconds = (ms: number) => `${Math.round(ms / 1000)} s`;
    throw new DeviceAuthError(
      'stale_timestamp',
      `clientTimestamp ${at.toISOString()} is ${seconds(Math.abs(skew))} ${skew < 0 ? 'behind' : 'ahead of'} the ` +
        `server clock (${now.toISOString()}); at most ${seconds(maxSkewMs)} either way is accepted. ` +
        'Check the device clock and sign the request again with the current time.',
    );
  }
  return at;
}
